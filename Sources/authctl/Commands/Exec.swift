import ArgumentParser
import AuthctlCore
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

struct Exec: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract:
            "Run a command with a fresh token in its environment (AUTHCTL_TOKEN, and AUTHCTL_ACCESS_TOKEN or AUTHCTL_ID_TOKEN); --serve: with AWS credentials kept fresh for its whole run.",
        discussion: """
            The tokens go in the environment, never on the command's argv, and only those --type \
            asks for (repeat it for both); AUTHCTL_CLIENT_SECRET and AUTHCTL_STORE_PASSPHRASE are removed from the command's \
            environment. authctl replaces itself with the command (exec), so the exit status and \
            signals are the command's own. With --serve, authctl stays as the command's parent for its whole run, \
            serving AWS credentials refreshed ahead of expiry (and the session's tokens) from a credentials endpoint \
            on 127.0.0.1 that only a request with the command's AWS_CONTAINER_AUTHORIZATION_TOKEN is answered by, \
            and then exits with the command's status or signal. \
            Example (the header reaches curl on stdin, not on its argv): \
            authctl exec -- sh -c 'printf "Authorization: Bearer %s\\n" "$AUTHCTL_ACCESS_TOKEN" | curl -H @- https://api.example.com/me'. \
            Example (a long job, the AWS SDK asking for fresh credentials as it goes): authctl exec --serve -- terraform apply
            """)

    @OptionGroup var global: GlobalOptions

    @OptionGroup var freshness: FreshnessOptions

    /// The tokens asked for, in order, without repeats.
    var requested: [TokenType] { freshness.types() }
    private var minValid: Double { freshness.minValid }

    @Flag(
        help:
            "Also put the identity pool's temporary AWS credentials in the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_CREDENTIAL_EXPIRATION), as aws-credentials gives them."
    )
    var aws = false

    @Flag(
        help: ArgumentHelp(
            "Serve fresh AWS credentials and tokens to the command for as long as it runs, from a credentials endpoint on 127.0.0.1 (AWS_CONTAINER_CREDENTIALS_FULL_URI and AWS_CONTAINER_AUTHORIZATION_TOKEN; the tokens at $AUTHCTL_SERVE_URL/tokens/access and /tokens/id), instead of static keys."
        ))
    var serve = false

    @OptionGroup(title: "AWS credentials (with --aws or --serve)")
    var identityPool: IdentityPoolOptions

    @OptionGroup(title: "Machine-to-machine tokens")
    var machine: MachineTokenOptions

    @OptionGroup(title: "A token for one audience (token exchange)")
    var derived: DerivedTokenOptions

    @Argument(
        parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("give the command to run after --, e.g. authctl exec -- env") }
        // The command inherits 0, 1 and 2: a passphrase there would be its input (or would be read
        // by it whenever the profile's store never needed the descriptor).
        if let fd = global.passphraseFd, (0...2).contains(fd) {
            throw ValidationError(
                "--passphrase-fd \(fd) is the command's standard \(["input", "output", "error"][Int(fd)]) with exec: give the passphrase on another descriptor, e.g. --passphrase-fd 3 3<file"
            )
        }
        if global.output == .json {
            throw ValidationError(
                "exec prints nothing of its own (the command's output is the command's): --output json does not apply.")
        }
        if serve && freshness.givenMinValid != nil {
            throw ValidationError(
                "--serve keeps what it serves fresh on its own (refreshed well before it expires): without --min-valid."
            )
        }
        if serve && (aws || machine.clientCredentials || derived.given || !freshness.givenTypes.isEmpty) {
            throw ValidationError(
                "--serve serves the AWS credentials and both tokens for the command's whole run: without --aws, --type, --client-credentials or --audience."
            )
        }
        if !aws && !serve && (identityPool.identityPoolId != nil || identityPool.roleArn != nil) {
            throw ValidationError(
                "--identity-pool-id and --role-arn choose the AWS credentials: use them with --aws or --serve.")
        }
        if machine.clientCredentials && (aws || requested != [.access]) {
            throw ValidationError(
                "--client-credentials gives the app client's access token only: without --aws or --type id.")
        }
        try machine.checkScopes(derived: derived)
        if derived.given && (aws || requested != [.access]) {
            throw ValidationError(
                "--audience and --resource give one token for that service only: without --aws or --type id.")
        }
    }

    func execute(in context: CommandContext) throws {
        // Descriptors the caller handed down (`3>file`, a make jobserver, `<(...)`) go on to CMD;
        // only those authctl opens itself from here on are closed at exec.
        // --passphrase-fd is the file store's, read (and closed) when the store was opened; one
        // left unread is not handed to the command either.
        let inherited = ChildProcess.openDescriptors().subtracting(global.passphraseFd.map { [$0] } ?? [])
        if serve { try serveCredentials(keeping: inherited, in: context) }
        let settings = try context.settings
        let awsCredentials =
            try aws
            ? IdentityPoolCredentials(
                session: try context.profileSession,
                pool: IdentityPoolSettings(identityPool, settings: settings, environment: context.environment)
            ).credentials() : nil
        if machine.clientCredentials {
            // The app client's own token: no user, so no id token; and not the client's secret.
            let token = try MachineTokens(session: try context.profileSession, options: machine.choice).token(
                minValidity: minValid)
            return try execute(keeping: inherited, only: token.accessToken, expiresAt: token.expiresAt, settings)
        }
        if let target = derived.target() {
            // The token for that one service, and not the session's own tokens.
            let token = try DerivedTokens(session: try context.profileSession).token(
                DerivedTokenChoice(target: target, scopes: machine.scopes), minValidity: minValid)
            for warning in token.textMessages { context.console.message(warning) }
            return try execute(keeping: inherited, only: token.token, expiresAt: token.expiresAt, settings)
        }
        // One fresh session for every token asked for (the first one's offline checks by the use
        // case, the others' here).
        let fresh = try context.profileSession.freshToken(
            requested.contains(.id) ? .id : .access, minValidity: minValid)
        let session = fresh.session
        let checks = TokenChecks(session: try context.profileSession)
        for type in requested where type != fresh.type { try checks.checkClaims(session, type) }

        // The command gets what it asked for and no other secret: not the token it did not ask
        // for (an inherited one included), not the app client's secret.
        for name in ChildProcess.authctlSecrets { unsetenv(name) }
        for type in requested {
            setenv(type == .access ? "AUTHCTL_ACCESS_TOKEN" : "AUTHCTL_ID_TOKEN", checks.token(session, type), 1)
        }
        setenv("AUTHCTL_TOKEN", checks.token(session, requested[0]), 1)
        setenv("AUTHCTL_TOKEN_EXPIRES_AT", Format.iso8601(session.accessTokenExpiresAt), 1)
        setenv("AUTHCTL_PROFILE", session.profile, 1)
        for variable in awsCredentials?.environment ?? [] { setenv(variable.name, variable.value, 1) }
        try execute(keeping: inherited)
    }

    /// `--serve`: the credentials endpoint for the command's life, the command as a child, and its
    /// end passed on (its exit status, or its signal raised here).
    private func serveCredentials(keeping inherited: Set<Int32>, in context: CommandContext) throws -> Never {
        ServedChild.takeSignals()
        let settings = try context.settings
        let source = IdentityPoolCredentials(
            session: try context.profileSession,
            pool: try IdentityPoolSettings(identityPool, settings: settings, environment: context.environment))
        // What the first request gets, fetched before the command starts: a failure is authctl's
        // exit code, with nothing run.
        let endpoint = try CredentialsEndpoint(
            serving: source.served(minValidity: ServeSchedule.ahead), trace: context.trace)
        let child = try ServedChild.spawn(
            command, environment: endpoint.childEnvironment(context.environment, profile: settings.profile),
            keeping: inherited)
        endpoint.start()
        let now = context.now
        let report: (Error?) -> Void = { error in
            guard let error else {
                return context.console.message("authctl: the served credentials are refreshed again.")
            }
            context.console.message(
                "authctl: warning: the served credentials could not be refreshed (\(AuthctlError.from(error).message)); the held ones are served while they are valid, and the refresh is retried."
            )
        }
        endpoint.keepFresh(now: now, fetch: { try source.served(minValidity: $0) }, report: report)
        let end = ServedChild.wait(child)
        endpoint.stop()
        switch end {
        case .exited(let status):
            Glibc.exit(status)
        case .signaled(let signal):
            ServedChild.raiseUnhandled(signal)
            // A signal whose default is not to end the process: the shell's code for it.
            Glibc.exit(128 + signal)
        }
    }

    /// The command with one access token (a machine or a derived one) and no other secret.
    private func execute(keeping inherited: Set<Int32>, only token: String, expiresAt: Date, _ settings: Settings)
        throws
    {
        for name in ChildProcess.authctlSecrets { unsetenv(name) }
        setenv("AUTHCTL_ACCESS_TOKEN", token, 1)
        setenv("AUTHCTL_TOKEN", token, 1)
        setenv("AUTHCTL_TOKEN_EXPIRES_AT", Format.iso8601(expiresAt), 1)
        setenv("AUTHCTL_PROFILE", settings.profile, 1)
        try execute(keeping: inherited)
    }

    private func execute(keeping inherited: Set<Int32>) throws {
        ChildProcess.prepareForExec(keeping: inherited)

        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) }
        argv.append(nil)
        execvp(command[0], &argv)
        let reason = String(cString: strerror(errno))
        let code: AuthctlError.Code = errno == ENOENT ? .commandNotFound : .cannotExecute
        throw AuthctlError(code, "cannot run \(command[0]): \(reason)")
    }
}

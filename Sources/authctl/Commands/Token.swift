import ArgumentParser
import CognitoClient
import Foundation
import LocalFormats
import SecureStore

struct Token: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print a fresh access (or id) token and nothing else, for scripts: $(authctl token).",
        discussion: """
            Refreshes first when the token expires within --min-valid seconds. Parallel processes \
            refresh once: the refresh runs under a per-profile lock and re-reads the store. With \
            --username and --password-stdin, signs in when there is no valid session; where no \
            Secret Service can be reached it keeps nothing (one line on stderr) and still prints the token.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(name: .customLong("type"), help: "Which token: access or id.")
    var type: TokenType = .access

    @Option(help: ArgumentHelp("Refresh first when the token expires within this many seconds.", valueName: "seconds"))
    var minValid: Double = 60

    @Flag(help: "Also check the token's RS256 signature against the pool's published keys (JWKS).")
    var verify = false

    @Option(help: ArgumentHelp("Sign in as this user when there is no valid session (with --password-stdin).", valueName: "name"))
    var username: String?

    @Flag(help: "Read the password from standard input to sign in when there is no valid session.")
    var passwordStdin = false

    @Option(help: "Sign-in flow when signing in: srp, password or user-auth (see --method).")
    var flow: SignInFlow?

    @OptionGroup(title: "Multi-factor authentication (when signing in)")
    var mfa: MFAOptions

    @OptionGroup(title: "Choice-based and passwordless sign-in (when signing in)")
    var userAuth: UserAuthOptions

    /// Signing in is asked for: with a password on stdin, or with USER_AUTH (which may need none).
    private var signsIn: Bool { passwordStdin || userAuth.usesUserAuth(flow: flow) }

    @OptionGroup(title: "Machine-to-machine tokens")
    var machine: MachineTokenOptions

    func validate() throws {
        try userAuth.check(flow: flow)
        if username != nil && !signsIn {
            throw ValidationError("--username says whom to sign in as when there is no valid session: use it with --password-stdin or --method.")
        }
        if (mfa.mfaCode != nil || mfa.mfaType != nil) && !signsIn {
            throw ValidationError("--code and --mfa-type answer the challenges of a sign-in: use them with --password-stdin or --method.")
        }
        if minValid < 0 || minValid > 86_400 { throw ValidationError("--min-valid must be between 0 and 86400 seconds.") }
        if machine.clientCredentials && (signsIn || type != .access || verify) {
            throw ValidationError("--client-credentials gives the app client's own access token: without --password-stdin, --method, --type or --verify.")
        }
    }

    func run(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        if machine.clientCredentials {
            return emit(try MachineTokens(context: context, settings: settings, options: machine).token(minValidity: minValid),
                        in: context)
        }
        let sessions = ProfileSession(context: context, settings: settings)
        let checks = TokenChecks(context: context, settings: settings)
        guard signsIn else {
            let (session, service) = try sessions.freshSession(minValidity: minValid)
            return try emit(session, checks: checks, service: service, context: context)
        }

        var client: ClientSettings?
        let obtained = try sessions.signInOrReuse(as: username, minValidity: minValid) { storeAvailable in
            let configured = try ClientSettings(settings)
            client = configured
            let appClient = try sessions.appClient(configured, storeRequired: false)
            guard let name = username ?? settings.username else {
                throw AuthctlError(.usage, "no username to sign in with: pass --username or set AUTHCTL_USERNAME")
            }
            let passwordSignIn = PasswordSignIn(context: context, settings: settings, client: configured, appClient: appClient,
                                                passwordFromStdin: passwordStdin, mfa: mfa,
                                                devices: storeAvailable ? RememberedDevices(context: context) : nil)
            let password = userAuth.usesUserAuth(flow: flow) ? nil
                : try PasswordSignIn.readPassword(console: context.console, fromStdin: true, username: name)
            return PreparedSignIn(username: name) {
                let result = try password.map { try passwordSignIn.signIn(username: name, password: $0, flow: flow?.passwordFlow ?? .srp) }
                    ?? passwordSignIn.signInUserAuth(username: name, method: userAuth.method)
                return try StoredSession(tokens: result.tokens, fallbackUsername: result.username, profile: settings.profile,
                                         client: configured, now: context.now())
            }
        }
        if let notKept = obtained.notKept {
            context.console.message(Messages.sessionNotKept(notKept.message))
        }
        let service = try obtained.service ?? context.service(settings, client: try client ?? ClientSettings(settings))
        try emit(obtained.session, checks: checks, service: service, context: context)
    }

    private func emit(_ session: StoredSession, checks: TokenChecks, service: CognitoService, context: CommandContext) throws {
        try checks.checkClaims(session, type)
        if verify { try checks.verifySignature(session, type, service: service) }
        let token = checks.token(session, type)
        guard !token.isEmpty else {
            throw AuthctlError(.notAuthorized, "the session holds no \(type.rawValue) token. Run: authctl signin")
        }
        let expiresAt = type == .access ? session.accessTokenExpiresAt
            : ((try? JWTClaims(token: token))?.expiresAt ?? session.accessTokenExpiresAt)
        emit(TokenOutput(token: token, type: type.rawValue, expiresAt: expiresAt, profile: session.profile), in: context)
    }
}

/// `token --output json`.
struct TokenOutput: CommandReport {
    var token: String
    var type: String
    var expiresAt: Date
    var profile: String

    var textOutput: [String] { [token] }
}

import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

    @OptionGroup var freshness: FreshnessOptions

    @Flag(help: "Also check the token's RS256 signature against the pool's published keys (JWKS).")
    var verify = false

    @OptionGroup(title: "Signing in when there is no valid session (with --password-stdin or --method)")
    var how: SignInOptions

    @OptionGroup(title: "Multi-factor authentication (when signing in)")
    var mfa: MFAOptions

    @OptionGroup(title: "Passkeys (--method passkey)")
    var securityKey: SecurityKeyOptions

    @OptionGroup(title: "Machine-to-machine tokens")
    var machine: MachineTokenOptions

    private var type: TokenType { freshness.type() }

    /// Signing in is asked for: with a password on stdin, or with USER_AUTH (which may need none).
    private var signsIn: Bool { how.passwordStdin || how.usesUserAuth }

    func validate() throws {
        try freshness.requireOneType()
        if how.username != nil && !signsIn {
            throw ValidationError(
                "--username says whom to sign in as when there is no valid session: use it with --password-stdin or --method."
            )
        }
        if mfa.given && !signsIn {
            throw ValidationError(
                "--code and --mfa-type answer the challenges of a sign-in: use them with --password-stdin or --method.")
        }
        if machine.clientCredentials && (signsIn || type != .access || verify) {
            throw ValidationError(
                "--client-credentials gives the app client's own access token: without --password-stdin, --method, --type or --verify."
            )
        }
    }

    func execute(in context: CommandContext) throws {
        let settings = try context.settings
        if machine.clientCredentials {
            return context.emit(
                try MachineTokens(context: context, settings: settings, options: machine.choice)
                    .token(minValidity: freshness.minValid))
        }
        let checks = TokenChecks(context: context, settings: settings)
        guard signsIn else {
            let (session, service) = try context.sessions.freshSession(minValidity: freshness.minValid, for: type)
            return try emit(session, checks: checks, service: service, context: context)
        }
        let client = try ClientSettings(settings)
        let request = SignInRequest(
            username: how.username,
            missingUsername: .refuse("no username to sign in with: pass --username or set AUTHCTL_USERNAME"),
            method: how.passwordFlow.map { .password($0) } ?? .userAuth(how.method),
            password: how.passwordStdin ? .standardInput : .terminal, mfa: mfa.answers,
            securityKey: securityKey.choice(environment: context.environment))
        let obtained = try SignInPipeline.obtain(request, in: context, minValidity: freshness.minValid)
        if let notKept = obtained.notKept {
            context.console.message(Messages.sessionNotKept(notKept.message))
        }
        let service = try obtained.service ?? context.service(settings, client: client)
        try emit(obtained.session, checks: checks, service: service, context: context)
    }

    private func emit(_ session: StoredSession, checks: TokenChecks, service: CognitoService, context: CommandContext)
        throws
    {
        try checks.checkClaims(session, type)
        if verify { try checks.verifySignature(session, type, service: service) }
        let token = checks.token(session, type)
        guard !token.isEmpty else {
            throw AuthctlError(.notAuthorized, "the session holds no \(type.rawValue) token. Run: authctl signin")
        }
        let expiresAt =
            type == .access
            ? session.accessTokenExpiresAt
            : ((try? JWTClaims(token: token))?.expiresAt ?? session.accessTokenExpiresAt)
        context.emit(TokenOutput(token: token, type: type.rawValue, expiresAt: expiresAt, profile: session.profile))
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

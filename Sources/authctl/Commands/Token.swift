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
            --username and --password-stdin, signs in when there is no valid session and keeps it; a store that cannot keep it is refused \
            before anything is sent (exit 78), as signin does.
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

    @OptionGroup(title: "A token for one audience (token exchange)")
    var derived: DerivedTokenOptions

    @Flag(
        help:
            "With --audience or --resource: read an intermediary's access token from standard input (one line); the token issued names it in its act claim (delegation). Never cached."
    )
    var actorTokenStdin = false

    private var type: TokenType { freshness.type() }

    /// Signing in is asked for: with a password on stdin, or with USER_AUTH (which may need none).
    private var signsIn: Bool { how.passwordStdin || how.usesUserAuth }

    func validate() throws {
        try freshness.requireOneType()
        try machine.checkScopes(derived: derived)
        if actorTokenStdin && !derived.given {
            throw ValidationError("--actor-token-stdin goes with --audience or --resource.")
        }
        if derived.given && (signsIn || type != .access || verify) {
            throw ValidationError(
                "--audience and --resource exchange the stored session's access token: without --password-stdin, --method, --type or --verify."
            )
        }
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
        if machine.clientCredentials {
            return context.emit(
                try MachineTokens(session: try context.profileSession, options: machine.choice)
                    .token(minValidity: freshness.minValid))
        }
        if let target = derived.target() {
            let actor = actorTokenStdin ? try Self.readActorToken(context) : nil
            return context.emit(
                try DerivedTokens(session: try context.profileSession).token(
                    DerivedTokenChoice(target: target, scopes: machine.scopes, actorToken: actor),
                    minValidity: freshness.minValid))
        }
        guard signsIn else {
            return try Self.printToken(type, minValid: freshness.minValid, verify: verify, in: context)
        }
        let request = SignInRequest(
            username: how.username,
            missingUsername: .refuse("no username to sign in with: pass --username or set AUTHCTL_USERNAME"),
            method: how.passwordFlow.map { .password($0) } ?? .userAuth(how.method),
            password: how.passwordStdin ? .standardInput : .terminal, mfa: mfa.answers,
            securityKey: securityKey.choice(environment: context.environment))
        let fresh = try context.profileSession.freshToken(
            type, minValidity: freshness.minValid, signIn: .unlessFresh(request))
        try Self.emit(fresh, verify: verify, in: context)
    }

    /// `token` without a way to sign in: the work both front doors run (`FastPath`).
    static func printToken(_ type: TokenType, minValid: Double, verify: Bool, in context: CommandContext) throws {
        try emit(context.profileSession.freshToken(type, minValidity: minValid), verify: verify, in: context)
    }

    /// The actor token: one line of standard input, never argv; a JWT or refused before any request.
    static func readActorToken(_ context: CommandContext) throws -> String {
        guard let line = context.console.readLine()?.trimmedBlanks(), !line.isEmpty else {
            throw AuthctlError(.usage, "--actor-token-stdin: standard input held no token")
        }
        guard TokenShape.isJWT(line) else {
            throw AuthctlError(.usage, "--actor-token-stdin: standard input is not an access token (a JWT)")
        }
        return line
    }

    private static func emit(_ fresh: FreshToken, verify: Bool, in context: CommandContext) throws {
        let type = fresh.type
        if verify {
            try TokenChecks(session: context.profileSession).verifySignature(
                fresh.session, type, service: fresh.service)
        }
        guard !fresh.token.isEmpty else {
            throw AuthctlError(.notAuthorized, "the session holds no \(type.rawValue) token. Run: authctl signin")
        }
        context.emit(
            TokenOutput(
                token: fresh.token, type: type.rawValue, expiresAt: fresh.expiresAt, profile: fresh.session.profile))
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

import ArgumentParser
import CognitoClient
import Foundation
import SecureStore

extension TokenType: ExpressibleByArgument {}

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
            let token = try MachineTokens(context: context, settings: settings, options: machine).token(minValidity: minValid)
            switch global.output {
            case .text: context.console.output(token.accessToken)
            case .json: context.printJSON(token)
            }
            return
        }
        let keeper = SessionKeeper(context: context, settings: settings)
        let checks = TokenChecks(context: context, settings: settings)

        var storeError: SecureStoreError?
        do {
            let (session, service) = try keeper.freshSession(minValidity: minValid)
            // A session of another user than the one asked for is no valid session for this call.
            if username.map({ session.isSignedIn(as: $0) }) ?? true {
                try emit(session, checks: checks, service: service, context: context)
                return
            }
        } catch let error as SecureStoreError {
            guard signsIn else { throw error }
            storeError = error
        } catch let error as AuthctlError where error.code == .notAuthorized && signsIn {
            // Not signed in, or the session ended: sign in below.
        }

        let client = try ClientSettings(settings)
        let appClient = try keeper.appClient(client, storeRequired: false)
        guard let name = username ?? settings.username else {
            throw AuthctlError(.usage, "no username to sign in with: pass --username or set AUTHCTL_USERNAME")
        }
        let passwordSignIn = PasswordSignIn(context: context, settings: settings, client: client, appClient: appClient,
                                            passwordFromStdin: passwordStdin, mfa: mfa,
                                            devices: storeError == nil ? RememberedDevices(context: context) : nil)
        let password = userAuth.usesUserAuth(flow: flow) ? nil
            : try PasswordSignIn.readPassword(console: context.console, fromStdin: true, username: name)
        let signIn = {
            let result = try password.map { try passwordSignIn.signIn(username: name, password: $0, flow: flow?.passwordFlow ?? .srp) }
                ?? passwordSignIn.signInUserAuth(username: name, method: userAuth.method)
            return try StoredSession(tokens: result.tokens, fallbackUsername: result.username, profile: settings.profile,
                                     client: client, now: context.now())
        }
        var signedIn: StoredSession?
        var signInStarted = false
        if storeError == nil {
            do {
                // Under the profile's lock: of many jobs started together on no session, one signs
                // in and the others take its session from the store.
                signedIn = try RefreshLock.withLock(profile: settings.profile, environment: context.environment) {
                    // An unreadable item (AuthctlError) is no session: the sign-in below replaces it.
                    let stored: StoredSession?
                    do {
                        stored = try keeper.repository.load(profile: settings.profile)
                    } catch let error as AuthctlError where error.unreadableSession {
                        stored = nil
                    }
                    if let current = stored, current.isSignedIn(as: name),
                       !current.expiresWithin(minValid, now: context.now()), (try? keeper.checkConfiguredClient(current)) != nil {
                        return current
                    }
                    signInStarted = true
                    let fresh = try signIn()
                    ProcessSafety.deferTermination()
                    defer { ProcessSafety.releaseTermination() }
                    do {
                        try keeper.repository.save(fresh)
                    } catch let error as SecureStoreError {
                        storeError = error
                    }
                    return fresh
                }
            } catch let error as SecureStoreError where !signInStarted {
                // The store failed before any sign-in (reading it): sign in without it below. A
                // failure during the sign-in is thrown: another try would send another code.
                storeError = error
            }
        }
        let session = try signedIn ?? signIn()
        if let storeError {
            context.console.message("authctl: no Secret Service (\(storeError.message)); the session was not kept.")
        }
        try emit(session, checks: checks, service: try context.service(settings, client: client), context: context)
    }

    private func emit(_ session: StoredSession, checks: TokenChecks, service: CognitoService, context: CommandContext) throws {
        try checks.checkClaims(session, type)
        if verify { try checks.verifySignature(session, type, service: service) }
        let token = checks.token(session, type)
        guard !token.isEmpty else {
            throw AuthctlError(.notAuthorized, "the session holds no \(type.rawValue) token. Run: authctl signin")
        }
        switch global.output {
        case .text:
            context.console.output(token)
        case .json:
            let expiresAt = type == .access ? session.accessTokenExpiresAt
                : ((try? JWTClaims(token: token))?.expiresAt ?? session.accessTokenExpiresAt)
            context.printJSON(TokenOutput(token: token, type: type.rawValue, expiresAt: expiresAt, profile: session.profile))
        }
    }
}

/// `token --output json`.
struct TokenOutput: Encodable {
    var token: String
    var type: String
    var expiresAt: Date
    var profile: String
}

import ArgumentParser
import CognitoClient
import Foundation

extension PasswordFlow: ExpressibleByArgument {}

struct SignIn: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "signin",
        abstract: "Sign in with a username and password and keep the session in the Secret Service.",
        discussion: """
            The password is asked on the terminal without echo, or read from the first line of \
            standard input with --password-stdin. It is never taken from the command line. \
            When the account must choose a new password (NEW_PASSWORD_REQUIRED), it is asked twice \
            on the terminal, or read from the second line of standard input.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Username or alias (env AUTHCTL_USERNAME, or the profile's username; asked on a terminal otherwise).", valueName: "name"))
    var username: String?

    @Flag(help: "Read the password from the first line of standard input (and a required new password from the second).")
    var passwordStdin = false

    @Option(help: "srp: the password never leaves this machine (USER_SRP_AUTH). password: USER_PASSWORD_AUTH. user-auth: choice-based sign-in (USER_AUTH), see --method.")
    var flow: SignInFlow?

    @Flag(help: "Keep nothing: print the tokens as JSON on stdout instead (for runners without a keyring).")
    var noStore = false

    @Flag(help: "Remember this device when the pool leaves it to the user, so later sign-ins skip MFA (asked on a terminal otherwise).")
    var rememberDevice = false

    /// Remembered devices are kept in the Secret Service, so --no-store tracks none.
    private func devices(_ context: CommandContext) -> RememberedDevices? {
        noStore ? nil : RememberedDevices(context: context, rememberWithoutAsking: rememberDevice)
    }

    @OptionGroup(title: "Multi-factor authentication")
    var mfa: MFAOptions

    @OptionGroup(title: "Multi-factor authentication")
    var mfaSetup: MFASetupOptions

    @OptionGroup(title: "Choice-based and passwordless sign-in")
    var userAuth: UserAuthOptions

    @OptionGroup(title: "Browser sign-in (managed login, single sign-on)")
    var browserSignIn: BrowserSignInOptions

    func validate() throws {
        try userAuth.check(flow: flow)
        if browserSignIn.browser && (username != nil || passwordStdin || noStore || flow != nil || mfa.mfaCode != nil
                                     || mfa.mfaType != nil || userAuth.usesUserAuth(flow: flow)) {
            throw ValidationError("--browser signs in on the managed login's page: without --username, --password-stdin, --no-store, --flow, --method or --mfa-*.")
        }
    }

    func run(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        if browserSignIn.browser {
            let session = try BrowserSignIn(context: context, settings: settings, options: browserSignIn).run()
            return announce(session, context: context)
        }
        let client = try ClientSettings(settings)
        let console = context.console

        let keeper = SessionKeeper(context: context, settings: settings)
        // A malformed code fails before anything is sent (the challenge decides 6 or 6–8 digits).
        if let code = mfa.mfaCode { _ = try ChallengeResponder.normalized(code) }
        if let code = mfa.mfaCode, !passwordStdin {
            // A sign-in waiting for this code (a set-up handed to a script, a code sent where no
            // one could be asked)? Without --no-store the Secret Service must answer; with it, a
            // missing keyring only means nothing waits.
            let pending = noStore ? ((try? PendingChallenge.load(context.store, profile: settings.profile)) ?? nil)
                : try PendingChallenge.load(context.store, profile: settings.profile)
            if let pending {
                let result = try finish(pending, code: code, keeper: keeper, settings: settings, client: client, context: context)
                return try deliver(result, keeper: keeper, settings: settings, client: client, context: context)
            }
        }

        if userAuth.usesUserAuth(flow: flow) {
            return try signInUserAuth(keeper: keeper, settings: settings, client: client, context: context)
        }
        let givenUsername = username ?? settings.username
        if givenUsername == nil && !console.isInteractive {
            throw AuthctlError(.usage, "no username: pass --username, set AUTHCTL_USERNAME, or set username in the profile")
        }
        if !passwordStdin && !console.isInteractive {
            throw AuthctlError(.usage, "no terminal to ask for the password: pipe it on standard input with --password-stdin")
        }
        // Reach the keyring before asking for anything, so a missing one fails before the password is typed.
        let appClient = try keeper.appClient(client, storeRequired: !noStore)

        guard let name = givenUsername ?? console.prompt("Username: ", secret: false), !name.isEmpty else {
            throw AuthctlError(.usage, "no username given")
        }
        let password = try readPassword(console: console, username: name)
        // A new sign-in replaces one that was left waiting for a code.
        if !noStore { PendingChallenge.discard(context.store, profile: settings.profile) }

        let result: SignInResult
        do {
            result = try PasswordSignIn(context: context, settings: settings, client: client, appClient: appClient,
                                        passwordFromStdin: passwordStdin, mfa: mfa, setupOutput: mfaSetup.mfaSetupOutput,
                                        devices: devices(context))
                .signIn(username: name, password: password, flow: flow?.passwordFlow ?? .srp)
        } catch is MFASetupHandedOver {
            console.message("The authenticator secret is on stdout. Add it to the app, then within 3 minutes run: \(PendingChallenge.nextCommand(profile: settings.profile))")
            return
        }
        try deliver(result, keeper: keeper, settings: settings, client: client, context: context)
    }

    /// Stores the session (or prints the tokens with --no-store) and says who is signed in.
    func deliver(_ result: SignInResult, keeper: SessionKeeper, settings: Settings, client: ClientSettings,
                         context: CommandContext) throws {
        let console = context.console
        let now = context.now()
        if noStore {
            let tokens = result.tokens
            let expiresAt = StoredSession.expiry(of: tokens, claims: try JWTClaims(token: tokens.accessToken), now: now)
            context.printJSON(TokenSet(accessToken: tokens.accessToken, idToken: tokens.idToken,
                                       refreshToken: tokens.refreshToken, expiresAt: expiresAt,
                                       tokenType: tokens.tokenType ?? "Bearer"))
            if global.output == .text {
                console.message("Signed in as \(OutsideText(result.username)); nothing was stored (--no-store); access token valid until \(Format.localTime(expiresAt))")
            }
            return
        }

        try store(result, keeper: keeper, settings: settings, client: client, context: context)
    }

    /// `signin --code CODE` with a sign-in waiting in the Secret Service. The pending item is
    /// removed once the sign-in is done or the service has ended its session, never before: a
    /// wrong code or a passing failure leaves it for another try within its 3 minutes.
    private func finish(_ pending: PendingChallenge, code: String, keeper: SessionKeeper, settings: Settings,
                        client: ClientSettings, context: CommandContext) throws -> SignInResult {
        let store = context.store
        let profile = settings.profile
        if pending.userPoolId != client.userPoolId || pending.clientId != client.clientId {
            throw AuthctlError(.usage, """
                the sign-in waiting in profile \(profile) was started with client \(pending.clientId) of \(pending.userPoolId), \
                but client \(client.clientId) of \(client.userPoolId) is configured; use the configuration it was started with, \
                or start a new sign-in with a password
                """)
        }
        // Only an explicit --username can contradict the waiting sign-in: a default one
        // (AUTHCTL_USERNAME, the profile's) must not block finishing what --username started.
        if let wanted = username, !pending.isFor(username: wanted) {
            throw AuthctlError(.usage, """
                the sign-in waiting in profile \(profile) is for \(pending.displayName), not \(wanted); \
                finish it without --username (or with --username \(pending.displayName)), or start a new sign-in with a password
                """)
        }
        if pending.isExpired(now: context.now()) {
            PendingChallenge.discard(store, profile: profile)
            throw AuthctlError(.notAuthorized, "The sign-in took too long: its code was not given within 3 minutes; start again: authctl signin")
        }
        let appClient = try keeper.appClient(client, storeRequired: !noStore)
        var signIn = PasswordSignIn(context: context, settings: settings, client: client, appClient: appClient,
                                    passwordFromStdin: false, mfa: mfa, devices: devices(context))
        signIn.wrongCodesBefore = pending.wrongCodes
        do {
            let result = try signIn.finishPending(pending, code: code, profile: profile)
            PendingChallenge.discard(store, profile: profile)
            if pending.challengeName == .mfaSetup {
                context.console.message("Authenticator app set up; it will be asked for at every sign-in.")
            }
            return result
        } catch is CodeDidNotMatch {
            var kept = pending
            kept.wrongCodes += 1
            try? kept.save(store, profile: profile)
            throw AuthctlError(.notAuthorized, "The code did not match; the sign-in still waits: try another code with \(PendingChallenge.nextCommand(profile: profile)) before \(Format.localTime(pending.expiresAt))")
        }
    }

    private func store(_ result: SignInResult, keeper: SessionKeeper, settings: Settings, client: ClientSettings,
                       context: CommandContext) throws {
        let console = context.console
        let session = try StoredSession(tokens: result.tokens, fallbackUsername: result.username,
                                        profile: settings.profile, client: client, now: context.now())
        let replaced = try keeper.save(session)
        // Signing in again must not leave the previous refresh token usable on the service for
        // weeks while nothing here remembers it: revoke it (best effort, same app client only).
        if let replaced, replaced.refreshToken != session.refreshToken,
           replaced.userPoolId == session.userPoolId, replaced.clientId == session.clientId,
           ClientSettings.sameEndpoint(replaced.endpoint, session.endpoint) {
            do {
                try context.service(settings, client: client).revokeToken(refreshToken: replaced.refreshToken,
                                                                          client: try keeper.appClient(client))
            } catch {
                console.message("authctl: warning: the refresh token of the session this sign-in replaced could not be revoked (\(AuthctlError.from(error).message)); it stays usable until it expires.")
            }
        }
        announce(session, context: context)
    }

    /// Says who is signed in.
    private func announce(_ session: StoredSession, context: CommandContext) {
        switch global.output {
        case .json:
            context.printJSON(SignInSummary(username: session.username, sub: session.sub, profile: session.profile,
                                            userPoolId: session.userPoolId, accessTokenExpiresAt: session.accessTokenExpiresAt))
        case .text:
            context.console.message("Signed in as \(OutsideText(session.username)) (profile \(session.profile)); access token valid until \(Format.localTime(session.accessTokenExpiresAt))")
        }
    }

    private func readPassword(console: Console, username: String) throws -> String {
        try PasswordSignIn.readPassword(console: console, fromStdin: passwordStdin, username: username)
    }
}

/// Signing in with a password, shared by `signin` and `token --password-stdin`.
struct PasswordSignIn {
    let context: CommandContext
    let settings: Settings
    let client: ClientSettings
    let appClient: AppClient
    let passwordFromStdin: Bool
    /// The command's own parsed MFA options (never a default-constructed, unparsed one).
    let mfa: MFAOptions
    var setupOutput: MFASetupOutput? = nil
    /// Remembered devices (nil: none sent, none confirmed).
    var devices: RememberedDevices? = nil
    /// Codes refused in earlier runs of a pending sign-in.
    var wrongCodesBefore = 0

    static func readPassword(console: Console, fromStdin: Bool, username: String) throws -> String {
        let password: String?
        if fromStdin {
            password = console.readLine()
        } else {
            password = console.prompt("Password for \(username): ", secret: true)
        }
        guard let password, !password.isEmpty else {
            throw AuthctlError(.usage, fromStdin ? "--password-stdin: standard input held no password" : "no password given")
        }
        return password
    }

    func signIn(username: String, password: String, flow: PasswordFlow) throws -> SignInResult {
        let service = try context.service(settings, client: client)
        let authenticator = Authenticator(service: service, client: appClient, now: context.now)
        let responder = ChallengeResponder(context: context, settings: settings, client: client, service: service,
                                           mfa: mfa, setupOutput: setupOutput, typedUsername: username,
                                           newPassword: { try readNewPassword(console: context.console, currentPassword: password) })
        let device = devices?.forSignIn(userPoolId: client.userPoolId, typedName: username, profile: settings.profile)
        // A device the service refused is dropped whether or not the sign-in made without it succeeds.
        defer { if let device, authenticator.refusedDevice != nil { devices?.discard(device, during: "sign-in") } }
        do {
            let result = try authenticator.signIn(username: username, password: password, flow: flow, device: device?.credentials,
                                                  respond: responder.answer)
            devices?.afterSignIn(result, sent: device, typedName: username, userPoolId: client.userPoolId, service: service)
            return result
        } catch is CodeDidNotMatch {
            throw AuthctlError(.notAuthorized, "The code did not match")
        } catch let error as CognitoError {
            if let refused = AccountFailure.signInRefusal(error, username: username) { throw refused }
            throw Self.signInFailure(error, client: client, hasSecret: appClient.clientSecret != nil, wrongCodes: responder.log.wrongCodes)
        }
    }

    /// Finishes a sign-in that waits in the Secret Service (see `PendingChallenge`) with `code`.
    /// Throws `CodeDidNotMatch` for a wrong code (the challenge lives on); removes the pending
    /// item when the service has ended its session.
    func finishPending(_ pending: PendingChallenge, code: String, profile: String) throws -> SignInResult {
        let service = try context.service(settings, client: client)
        let authenticator = Authenticator(service: service, client: appClient, now: context.now)
        let responder = ChallengeResponder(context: context, settings: settings, client: client, service: service,
                                           mfa: mfa, typedUsername: pending.typedUsername,
                                           newPassword: { throw AuthctlError(.usage, "a new password cannot be set here; run authctl signin") })
        responder.log.wrongCodes = wrongCodesBefore
        // The device the first run sent (if any) was accepted; a new one may come with the tokens.
        let confirmingDevice = { (result: SignInResult) -> SignInResult in
            devices?.afterSignIn(result, sent: nil, typedName: pending.displayName, userPoolId: client.userPoolId, service: service)
            return result
        }
        do {
            if pending.challengeName == .mfaSetup {
                var session = pending.session
                if !pending.verified {
                    let verified: VerifySoftwareTokenResponse
                    do {
                        verified = try service.verifySoftwareToken(session: pending.session,
                                                                   code: try ChallengeResponder.normalized(code, format: .authenticator),
                                                                   friendlyName: ChallengeResponder.friendlyName)
                    } catch let error as CognitoError where AuthenticatorEnrolment.isMismatch(error) {
                        throw CodeDidNotMatch()
                    }
                    guard verified.status == nil || verified.status == "SUCCESS" else { throw CodeDidNotMatch() }
                    session = verified.session ?? pending.session
                    // Only the challenge's answer is left; should it fail in passing, the next
                    // run answers with this session instead of verifying again.
                    var kept = pending
                    kept.session = session
                    kept.verified = true
                    try? kept.save(context.store, profile: profile)
                }
                let challenge = AuthChallenge(name: .mfaSetup, parameters: [:], username: pending.username, session: session)
                return try confirmingDevice(authenticator.resume(challenge, with: ChallengeAnswer(responses: [:], session: session),
                                                                 respond: responder.answer))
            }
            guard let field = pending.challengeName.codeField else {
                throw CognitoError.unsupportedChallenge(pending.challengeName)
            }
            var parameters: [String: String] = [:]
            parameters["CODE_DELIVERY_DESTINATION"] = pending.destination
            let challenge = AuthChallenge(name: pending.challengeName, parameters: parameters, username: pending.username,
                                          session: pending.session)
            return try confirmingDevice(authenticator.resume(challenge, with: [field: try ChallengeResponder.normalized(code, format: .delivered)],
                                                             respond: responder.answer))
        } catch let error as CognitoError where AuthenticatorEnrolment.isMismatch(error) {
            throw CodeDidNotMatch()
        } catch let error as CognitoError {
            if error.refusal?.endsChallenge ?? false { PendingChallenge.discard(context.store, profile: profile) }
            throw Self.signInFailure(error, client: client, hasSecret: appClient.clientSecret != nil, wrongCodes: responder.log.wrongCodes)
        }
    }

    func readNewPassword(console: Console, currentPassword: String?) throws -> String {
        if !passwordFromStdin { console.message("This account must choose a new password.") }
        return try NewPasswordReader.read(console: console, fromStdin: passwordFromStdin, current: currentPassword,
                                          stdinMissing: "this account must set a new password: give it as the second line of standard input")
    }

    /// Sign-in failures a person can act on; the same text for a wrong password and an unknown user.
    static func signInFailure(_ error: CognitoError, client: ClientSettings, hasSecret: Bool, wrongCodes: Int = 0) -> AuthctlError {
        switch error.refusal {
        case .secretHashRejected?:
            return AuthctlError(.configuration, hasSecret
                ? "the app client secret was refused (\(error.message)); check AUTHCTL_CLIENT_SECRET or `authctl configure --client-secret-stdin`"
                : "this app client has a secret: set AUTHCTL_CLIENT_SECRET or store it with `authctl configure --client-secret-stdin` (\(error.message))")
        case .attemptsExceeded?:
            return AuthctlError(.throttled, "Too many attempts; wait a few minutes and try again")
        case .codeMismatch?:
            return AuthctlError(.notAuthorized, "The code did not match")
        case .challengeSessionEnded?:
            // The service ends a challenge after a few wrong codes, and then says only this.
            return AuthctlError(.notAuthorized, wrongCodes > 0
                ? "Too many wrong codes: Cognito ended this sign-in; start the sign-in again: authctl signin"
                : "Cognito no longer accepts this sign-in's challenge; start again: authctl signin")
        case .challengeSessionExpired?, .codeExpired?:
            return AuthctlError(.notAuthorized, "The sign-in took too long and its challenge expired; start again: authctl signin")
        case .userNotFound?:
            return AuthctlError(.notAuthorized, "Incorrect username or password")
        default:
            if error.isNotAuthorized { return AuthctlError(.notAuthorized, "Incorrect username or password") }
        }
        return AuthctlError.from(error, endpoint: client.endpoint)
    }
}

/// Checks on a new password that need no server; the pool's own policy is the service's to enforce.
enum NewPasswordRules {
    static func check(_ password: String, current: String?) throws {
        if password.isEmpty {
            throw AuthctlError(.inputRejected, "The new password is empty")
        }
        if password.first?.isWhitespace == true || password.last?.isWhitespace == true {
            throw AuthctlError(.inputRejected, "The new password must not begin or end with white space")
        }
        if let current, password == current {
            throw AuthctlError(.inputRejected, "The new password must differ from the current one")
        }
    }
}

struct SignInSummary: Encodable {
    var username: String
    var sub: String
    var profile: String
    var userPoolId: String
    var accessTokenExpiresAt: Date
}

struct TokenSet: Encodable {
    var accessToken: String
    var idToken: String?
    var refreshToken: String?
    var expiresAt: Date
    var tokenType: String
}

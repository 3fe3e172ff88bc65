import ArgumentParser
import CognitoClient
import Foundation
import LocalFormats

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
        if browserSignIn.browser && (username != nil || passwordStdin || flow != nil || mfa.mfaCode != nil
                                     || mfa.mfaType != nil || userAuth.usesUserAuth(flow: flow)) {
            throw ValidationError("--browser signs in on the managed login's page: without --username, --password-stdin, --flow, --method or --mfa-*.")
        }
    }

    func run(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        if browserSignIn.browser {
            let signIn = BrowserSignIn(context: context, settings: settings, options: browserSignIn, keep: !noStore)
            switch try signIn.run() {
            case .stored(let session):
                return emit(SignInSummary(session), in: context)
            case .notStored(let session):
                return emit(TokenSet(session), in: context)
            }
        }
        let client = try ClientSettings(settings)
        let console = context.console

        let sessions = ProfileSession(context: context, settings: settings)
        // A malformed code fails before anything is sent (the challenge decides 6 or 6–8 digits).
        if let code = mfa.mfaCode { _ = try ChallengeResponder.normalized(code) }
        if let code = mfa.mfaCode, !passwordStdin {
            // A sign-in waiting for this code (a set-up handed to a script, a code sent where no
            // one could be asked)? Without --no-store the Secret Service must answer; with it, a
            // missing keyring only means nothing waits.
            let pending = noStore ? ((try? PendingChallenge.load(context.store, profile: settings.profile)) ?? nil)
                : try PendingChallenge.load(context.store, profile: settings.profile)
            if let pending {
                let result = try finish(pending, code: code, sessions: sessions, settings: settings, client: client, context: context)
                return try deliver(result, sessions: sessions, settings: settings, client: client, context: context)
            }
        }

        if userAuth.usesUserAuth(flow: flow) {
            return try signInUserAuth(sessions: sessions, settings: settings, client: client, context: context)
        }
        let givenUsername = username ?? settings.username
        if givenUsername == nil && !console.isInteractive {
            throw AuthctlError(.usage, "no username: pass --username, set AUTHCTL_USERNAME, or set username in the profile")
        }
        if !passwordStdin && !console.isInteractive {
            throw AuthctlError(.usage, "no terminal to ask for the password: pipe it on standard input with --password-stdin")
        }
        // Reach the keyring before asking for anything, so a missing one fails before the password is typed.
        let appClient = try sessions.appClient(client, storeRequired: !noStore)

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
        try deliver(result, sessions: sessions, settings: settings, client: client, context: context)
    }

    /// Stores the session (or prints the tokens with --no-store) and says who is signed in.
    func deliver(_ result: SignInResult, sessions: ProfileSession, settings: Settings, client: ClientSettings,
                 context: CommandContext) throws {
        let now = context.now()
        if noStore {
            let tokens = result.tokens
            let expiresAt = StoredSession.expiry(of: tokens, claims: try JWTClaims(token: tokens.accessToken), now: now)
            emit(TokenSet(accessToken: tokens.accessToken, idToken: tokens.idToken, refreshToken: tokens.refreshToken,
                          expiresAt: expiresAt, tokenType: tokens.tokenType ?? "Bearer", username: result.username), in: context)
            return
        }

        try store(result, sessions: sessions, settings: settings, client: client, context: context)
    }

    /// `signin --code CODE` with a sign-in waiting in the Secret Service. The pending item is
    /// removed once the sign-in is done or the service has ended its session, never before: a
    /// wrong code or a passing failure leaves it for another try within its 3 minutes.
    private func finish(_ pending: PendingChallenge, code: String, sessions: ProfileSession, settings: Settings,
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
            throw AuthctlError(.notAuthorized, Messages.pendingCodeTooLate)
        }
        let appClient = try sessions.appClient(client, storeRequired: !noStore)
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

    private func store(_ result: SignInResult, sessions: ProfileSession, settings: Settings, client: ClientSettings,
                       context: CommandContext) throws {
        let session = try StoredSession(tokens: result.tokens, fallbackUsername: result.username,
                                        profile: settings.profile, client: client, now: context.now())
        try sessions.store(signedIn: session)
        emit(SignInSummary(session), in: context)
    }

    private func readPassword(console: Console, username: String) throws -> String {
        try PasswordSignIn.readPassword(console: console, fromStdin: passwordStdin, username: username)
    }
}

struct SignInSummary: CommandReport {
    var username: String
    var sub: String
    var profile: String
    var userPoolId: String
    var accessTokenExpiresAt: Date

    init(_ session: StoredSession) {
        username = session.username
        sub = session.sub
        profile = session.profile
        userPoolId = session.userPoolId
        accessTokenExpiresAt = session.accessTokenExpiresAt
    }

    var textMessages: [String] {
        ["Signed in as \(OutsideText(username)) (profile \(profile)); access token valid until \(Format.localTime(accessTokenExpiresAt))"]
    }
}

/// `signin --no-store`: the tokens are the answer, as JSON on stdout in either format.
struct TokenSet: CommandReport {
    var accessToken: String
    var idToken: String?
    var refreshToken: String?
    var expiresAt: Date
    var tokenType: String
    /// For the text only.
    var username: String

    enum CodingKeys: String, CodingKey { case accessToken, idToken, refreshToken, expiresAt, tokenType }

    /// A session signed in but not kept (`signin --browser --no-store`).
    init(_ session: StoredSession) {
        self.init(accessToken: session.accessToken, idToken: session.idToken, refreshToken: session.refreshToken,
                  expiresAt: session.accessTokenExpiresAt, tokenType: "Bearer", username: session.username)
    }

    init(accessToken: String, idToken: String?, refreshToken: String?, expiresAt: Date, tokenType: String, username: String) {
        (self.accessToken, self.idToken, self.refreshToken) = (accessToken, idToken, refreshToken)
        (self.expiresAt, self.tokenType, self.username) = (expiresAt, tokenType, username)
    }

    var textOutput: [String] { [Format.json(self)] }
    var textMessages: [String] {
        ["Signed in as \(OutsideText(username)); nothing was stored (--no-store); access token valid until \(Format.localTime(expiresAt))"]
    }
}

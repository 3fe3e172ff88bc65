import ArgumentParser
import AuthctlCore
import CognitoClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LocalFormats

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

    @OptionGroup var how: SignInOptions

    @Flag(help: "Keep nothing: print the tokens as JSON on stdout instead (for runners without a keyring).")
    var noStore = false

    @Flag(help: "Remember this device when the pool leaves it to the user, so later sign-ins skip MFA (asked on a terminal otherwise).")
    var rememberDevice = false

    @OptionGroup(title: "Multi-factor authentication")
    var mfa: MFAOptions

    @OptionGroup(title: "Multi-factor authentication")
    var mfaSetup: MFASetupOptions

    @OptionGroup(title: "Passkeys (--method passkey)")
    var securityKey: SecurityKeyOptions

    @OptionGroup(title: "Browser sign-in (managed login, single sign-on)")
    var browserSignIn: BrowserSignInOptions

    func validate() throws {
        if browserSignIn.browser && (how.given || mfa.given) {
            throw ValidationError("--browser signs in on the managed login's page: without --username, --password-stdin, --flow, --method or --mfa-*.")
        }
    }

    func execute(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        // A malformed code fails before anything is sent (the challenge decides 6 or 6–8 digits).
        if let code = mfa.mfaCode { _ = try OneTimeCode.normalized(code) }
        let client = try ClientSettings(settings)
        let sessions = ProfileSession(context: context, settings: settings)
        let console = context.console

        // A sign-in waiting for this code (a set-up handed to a script, a code sent where no one
        // could be asked)? Without --no-store the store must answer; with it, a missing one only
        // means nothing waits.
        var flow: SignInFlow?
        if let code = mfa.mfaCode, !how.passwordStdin, !browserSignIn.browser {
            let kept = context.kept(settings.profile)
            let pending = noStore ? ((try? kept.pendingChallenge()) ?? nil) : try kept.pendingChallenge()
            flow = pending.map { PendingCodeFlow(pending: $0, code: code, givenUsername: how.username) }
        }
        if flow == nil && !browserSignIn.browser {
            let givenUsername = how.username ?? settings.username
            // A password sign-in asks on the terminal its standard input is; USER_AUTH may ask on /dev/tty.
            if givenUsername == nil && !(how.usesUserAuth ? console.canPrompt : console.isInteractive) {
                throw AuthctlError(.usage, "no username: pass --username, set AUTHCTL_USERNAME, or set username in the profile")
            }
            if !how.usesUserAuth && !how.passwordStdin && !console.isInteractive {
                throw AuthctlError(.usage, "no terminal to ask for the password: pipe it on standard input with --password-stdin")
            }
        }
        // Reach the store before asking for anything: a missing one fails before a password is
        // typed or a code is sent to a sign-in that cannot be kept.
        let appClient = try sessions.appClient(client, storeRequired: !noStore)
        let signIn = SignInContext(command: context, settings: settings, client: client, appClient: appClient, mfa: mfa.answers,
                                   setupOutput: mfaSetup.mfaSetupOutput, passwordFromStdin: how.passwordStdin,
                                   devices: noStore ? nil : RememberedDevices(context: context, profile: settings.profile,
                                                                              rememberWithoutAsking: rememberDevice))
        signIn.securityKey = securityKey.choice(environment: context.environment)
        if browserSignIn.browser {
            flow = BrowserSignIn(options: browserSignIn.choice)
        } else if flow == nil {
            guard let name = how.username ?? settings.username ?? console.prompt("Username: ", secret: false), !name.isEmpty else {
                throw AuthctlError(.usage, "no username given")
            }
            if let passwordFlow = how.passwordFlow {
                // Asked before anything is sent.
                _ = try signIn.readPassword(for: name)
                flow = PasswordSignInFlow(name: name, flow: passwordFlow)
            } else {
                flow = UserAuthSignInFlow(name: name, method: how.method)
            }
        }
        let session: StoredSession
        do {
            session = try SignInPipeline(signIn).signIn(with: flow!, keep: !noStore)
        } catch is MFASetupHandedOver {
            return
        }
        if noStore {
            context.emit(TokenSet(session))
        } else {
            context.emit(SignInSummary(session))
        }
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

import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct SignIn: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "signin",
        abstract: "Sign in with a username and password and keep the session in the profile's store (--store).",
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

    @Flag(
        help:
            "Remember this device when the pool leaves it to the user, so later sign-ins skip MFA (asked on a terminal otherwise)."
    )
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
            throw ValidationError(
                "--browser signs in on the managed login's page: without --username, --password-stdin, --flow, --method or --mfa-*."
            )
        }
    }

    /// The sign-in asked for, in one value.
    func request(_ context: CommandContext) -> SignInRequest {
        let method: SignInRequest.Method
        if browserSignIn.browser {
            method = .browser(browserSignIn.choice)
        } else if let passwordFlow = how.passwordFlow {
            method = .password(passwordFlow)
        } else {
            method = .userAuth(how.method)
        }
        return SignInRequest(
            username: how.username, method: method, password: how.passwordStdin ? .standardInput : .terminal,
            mfa: mfa.answers, setupOutput: mfaSetup.mfaSetupOutput,
            securityKey: securityKey.choice(environment: context.environment),
            rememberDevice: rememberDevice, finishesPendingSignIn: true, checksForAPerson: true)
    }

    func execute(in context: CommandContext) throws {
        let outcome = try context.profileSession.signIn(request(context), keep: !noStore)
        // The handout is the report: the secret on stdout, the next step on stderr.
        if case .handedOverToMFASetup = outcome { return }
        let session = try outcome.session()
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
        [
            "Signed in as \(UntrustedText(username)) (profile \(profile)); access token valid until \(Format.localTime(accessTokenExpiresAt))"
        ]
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
        self.init(
            accessToken: session.accessToken, idToken: session.idToken, refreshToken: session.refreshToken,
            expiresAt: session.accessTokenExpiresAt, tokenType: "Bearer", username: session.username)
    }

    init(
        accessToken: String, idToken: String?, refreshToken: String?, expiresAt: Date, tokenType: String,
        username: String
    ) {
        (self.accessToken, self.idToken, self.refreshToken) = (accessToken, idToken, refreshToken)
        (self.expiresAt, self.tokenType, self.username) = (expiresAt, tokenType, username)
    }

    var textOutput: [String] { [Format.json(self)] }
    var textMessages: [String] {
        [
            "Signed in as \(UntrustedText(username)); nothing was stored (--no-store); access token valid until \(Format.localTime(expiresAt))"
        ]
    }
}

import CognitoClient
import LocalFormats

/// One sign-in as it was asked for: who, how, and the answers given up front. Each command that
/// signs in (`signin`, `token`, `kube-token`, `change-password`) builds one from its options, in
/// one place; `SignInPipeline` picks the flow from it. Plain values, no ArgumentParser.
package struct SignInRequest {
    /// The way in.
    package enum Method {
        /// USER_SRP_AUTH or USER_PASSWORD_AUTH.
        case password(PasswordFlow)
        /// Choice-based sign-in (USER_AUTH), with the first factor asked for, if any (`--method`).
        case userAuth(SignInMethod?)
        /// The pool's managed login in a browser.
        case browser(BrowserSignInChoice)
    }

    /// Where the password comes from.
    package enum PasswordSource: Equatable {
        /// Asked on the terminal without echo.
        case terminal
        /// The first line of standard input (and a required new password the second).
        case standardInput
        /// Already known (`change-password` signs in again with the new one).
        case known(String)
    }

    /// What to do when neither `username` nor the profile names the user.
    package enum MissingUsername {
        /// Ask on the terminal.
        case ask
        /// Refuse (exit 64) with this message.
        case refuse(String)
    }

    /// `--username` (the profile's `username` is the fallback).
    package var username: String?
    package var missingUsername: MissingUsername = .ask
    package var method: Method
    package var password: PasswordSource = .terminal
    /// `--code`, `--mfa-type`.
    package var mfa = MFAAnswers()
    /// `--mfa-setup-output`.
    package var setupOutput: MFASetupOutput?
    /// `--fido-device`, `--pin-fd` (WEB_AUTHN).
    package var securityKey = SecurityKeyChoice()
    /// `--remember-device`: remember this device without asking.
    package var rememberDevice = false
    /// `signin --code`: finish a sign-in left waiting for a code, when one waits.
    package var finishesPendingSignIn = false
    /// `signin`: before the store is reached, refuse a sign-in that needs a name or password
    /// asked of a person when none can be asked.
    package var checksForAPerson = false

    package init(
        username: String? = nil, missingUsername: MissingUsername = .ask, method: Method,
        password: PasswordSource = .terminal, mfa: MFAAnswers = MFAAnswers(), setupOutput: MFASetupOutput? = nil,
        securityKey: SecurityKeyChoice = SecurityKeyChoice(), rememberDevice: Bool = false,
        finishesPendingSignIn: Bool = false, checksForAPerson: Bool = false
    ) {
        self.username = username
        self.missingUsername = missingUsername
        self.method = method
        self.password = password
        self.mfa = mfa
        self.setupOutput = setupOutput
        self.securityKey = securityKey
        self.rememberDevice = rememberDevice
        self.finishesPendingSignIn = finishesPendingSignIn
        self.checksForAPerson = checksForAPerson
    }

    package var passwordFromStdin: Bool { password == .standardInput }

    package var isBrowser: Bool {
        if case .browser = method { return true }
        return false
    }

    package var usesUserAuth: Bool {
        if case .userAuth = method { return true }
        return false
    }
}

extension SignInPipeline {
    /// The context and flow of `request`: a sign-in waiting for the code given (`signin --code`),
    /// the browser, or a password or USER_AUTH sign-in of the user named, given or asked. The store
    /// is reached before anything is asked (`storeRequired`); `remembersDevices` is false where
    /// nothing is kept.
    package static func prepare(
        _ request: SignInRequest, for session: ProfileSession, storeRequired: Bool,
        remembersDevices: Bool
    ) throws -> PreparedSignIn {
        let (command, settings) = (session.context, session.settings)
        let client = try session.client
        // A malformed code fails before anything is sent (before the password is checked, too):
        // its shape is the factor's when --mfa-type names it, else any factor's.
        if let code = request.mfa.mfaCode {
            _ = try OneTimeCode.normalized(code, format: CodeFormat(request.mfa.mfaType))
        }
        var flow: SignInFlow?
        if request.finishesPendingSignIn, let code = request.mfa.mfaCode, !request.passwordFromStdin, !request.isBrowser
        {
            // Without a required store, a missing one only means nothing waits.
            let store = session.store
            let pending = storeRequired ? try store.pendingChallenge() : ((try? store.pendingChallenge()) ?? nil)
            flow = pending.map { PendingCodeFlow(pending: $0, code: code, givenUsername: request.username) }
            // `signin --code CODE` alone finishes a waiting sign-in: with none, it says so
            // (with --username, the code answers a new sign-in's challenge instead).
            if flow == nil && request.username == nil {
                throw AuthctlError(
                    .usage,
                    "no sign-in is waiting for a code (profile \(settings.profile)): `authctl signin --code CODE` finishes one that a sign-in left waiting; start one with `authctl signin`, or give --username to answer a new sign-in's challenge with this code"
                )
            }
        }
        if flow == nil && !request.isBrowser && request.checksForAPerson {
            let console = command.console
            // A password sign-in asks on the terminal its standard input is; USER_AUTH may ask on /dev/tty.
            if request.username ?? settings.username == nil
                && !(request.usesUserAuth ? console.canPrompt : console.inputIsTerminal)
            {
                throw AuthctlError(
                    .usage, "no username: pass --username, set AUTHCTL_USERNAME, or set username in the profile")
            }
            if !request.usesUserAuth && !request.passwordFromStdin && !console.inputIsTerminal {
                throw AuthctlError(
                    .usage, "no terminal to ask for the password: pipe it on standard input with --password-stdin")
            }
        }
        // Reach the store before asking for anything: a missing one fails before a password is
        // typed or a code is sent to a sign-in that cannot be kept.
        let appClient = try session.appClient(client, storeRequired: storeRequired)
        let devices =
            remembersDevices
            ? RememberedDevices(
                context: command, profile: settings.profile, rememberWithoutAsking: request.rememberDevice) : nil
        let signIn = SignInContext(
            session: session, client: client, appClient: appClient, request: request, devices: devices)
        if let flow { return PreparedSignIn(context: signIn, flow: flow) }
        if case .browser(let choice) = request.method {
            return PreparedSignIn(context: signIn, flow: BrowserSignIn(options: choice))
        }
        let name: String
        switch request.missingUsername {
        case .ask:
            guard
                let given = request.username ?? settings.username
                    ?? command.console.prompt("Username: ", secret: false),
                !given.isEmpty
            else {
                throw AuthctlError(.usage, "no username given")
            }
            name = given
        case .refuse(let message):
            guard let given = request.username ?? settings.username else { throw AuthctlError(.usage, message) }
            name = given
        }
        switch request.method {
        case .password(let passwordFlow):
            // Asked before anything is sent (and before a profile's lock is taken: a person may be slow).
            if case .known(let password) = request.password {
                signIn.password = password
            } else {
                _ = try signIn.readPassword(for: name)
            }
            return PreparedSignIn(context: signIn, flow: PasswordSignInFlow(name: name, flow: passwordFlow))
        case .userAuth(let method):
            return PreparedSignIn(context: signIn, flow: UserAuthSignInFlow(name: name, method: method))
        case .browser(let choice):
            return PreparedSignIn(context: signIn, flow: BrowserSignIn(options: choice))
        }
    }
}

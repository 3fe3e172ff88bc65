import ArgumentParser
import CognitoClient
import Foundation
import LocalFormats

/// `--flow`: the password flows, or choice-based sign-in (USER_AUTH).
enum SignInFlow: String, ExpressibleByArgument, CaseIterable {
    case srp
    case password
    case userAuth = "user-auth"

    /// The password flow, or nil for USER_AUTH.
    var passwordFlow: PasswordFlow? {
        switch self {
        case .srp: return .srp
        case .password: return .password
        case .userAuth: return nil
        }
    }
}

/// `--method`: the first factor to ask USER_AUTH for (PREFERRED_CHALLENGE).
enum SignInMethod: String, ExpressibleByArgument, CaseIterable {
    case emailOTP = "email-otp"
    case smsOTP = "sms-otp"
    case password
    case srp

    var factor: FirstFactor {
        switch self {
        case .emailOTP: return .emailOTP
        case .smsOTP: return .smsOTP
        case .password: return .password
        case .srp: return .passwordSRP
        }
    }

    static func from(_ factor: FirstFactor) -> SignInMethod? {
        allCases.first { $0.factor == factor }
    }

    var words: String {
        switch self {
        case .emailOTP: return "a code sent by email"
        case .smsOTP: return "a code sent by text message (SMS)"
        case .password: return "password (sent to Cognito over TLS)"
        case .srp: return "password, proven without sending it (SRP)"
        }
    }
}

/// Choice-based sign-in options, shared by `signin` and `token`.
struct UserAuthOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Sign in with USER_AUTH and this first factor: email-otp, sms-otp, password or srp (implies --flow user-auth).", valueName: "method"))
    var method: SignInMethod?

    /// `--method` implies `--flow user-auth`; a password flow next to it contradicts it.
    func check(flow: SignInFlow?) throws {
        if method != nil, let flow, flow != .userAuth {
            throw ValidationError("--method chooses a first factor of --flow user-auth; it cannot be used with --flow \(flow.rawValue).")
        }
    }

    func usesUserAuth(flow: SignInFlow?) -> Bool { method != nil || flow == .userAuth }
}

/// Picks the first factor SELECT_CHALLENGE offers: `--method`, the only usable one, or the
/// person's choice on the terminal.
enum FirstFactorChoice {
    static func choose(_ offered: [String], method: SignInMethod?, console: Console) throws -> String {
        let names = offered.map { OutsideText($0).description }.joined(separator: ", ")
        if let method {
            guard offered.contains(method.factor.rawValue) else {
                throw AuthctlError(.inputRejected, "--method \(method.rawValue) is not offered for this account; offered: \(names)")
            }
            return method.factor.rawValue
        }
        let usable = offered.compactMap(FirstFactor.init(rawValue:)).compactMap(SignInMethod.from)
        guard !usable.isEmpty else {
            if offered.contains(FirstFactor.webAuthn.rawValue) { throw passkeyOnly }
            throw AuthctlError(.unexpected, "this account offers no way of signing in that authctl can use (offered: \(names))")
        }
        if usable.count == 1 { return usable[0].factor.rawValue }
        guard console.canPrompt else {
            throw AuthctlError(.usage, "choose how to sign in with --method: \(usable.map(\.rawValue).joined(separator: ", ")) (offered: \(names))")
        }
        console.message("Choose how to sign in:")
        for (index, choice) in usable.enumerated() {
            console.message("  \(index + 1). \(choice.words)")
        }
        for _ in 0..<3 {
            let answer = console.prompt("Number [1-\(usable.count)]: ", secret: false)?.trimmingCharacters(in: .whitespaces) ?? ""
            if let number = Int(answer), (1...usable.count).contains(number) {
                return usable[number - 1].factor.rawValue
            }
            if let byName = usable.first(where: { $0.rawValue == answer.lowercased() }) {
                return byName.factor.rawValue
            }
            console.message("Please answer with a number from 1 to \(usable.count).")
        }
        throw AuthctlError(.usage, "no way of signing in chosen")
    }

    static let passkeyOnly = AuthctlError(.unexpected, "this account signs in only with a passkey (WEB_AUTHN), which needs a browser: run `authctl signin --browser`")
}

extension PasswordSignIn {
    /// Choice-based sign-in (USER_AUTH): the password is read only for a password factor.
    func signInUserAuth(username: String, method: SignInMethod?) throws -> SignInResult {
        let service = try context.service(settings, client: client)
        let authenticator = Authenticator(service: service, client: appClient, now: context.now)
        let console = context.console
        let passwordBox = ReadPassword()
        let responder = ChallengeResponder(context: context, settings: settings, client: client, service: service,
                                           mfa: mfa, setupOutput: setupOutput, typedUsername: username,
                                           newPassword: { try readNewPassword(console: console, currentPassword: passwordBox.value) })
        let handlers = UserAuthHandlers(
            choose: { try FirstFactorChoice.choose($0, method: method, console: console) },
            password: {
                if !passwordFromStdin && !console.canPrompt {
                    throw AuthctlError(.usage, "no terminal to ask for the password: pipe it on standard input with --password-stdin")
                }
                let password = try Self.readPassword(console: console, fromStdin: passwordFromStdin, username: username)
                passwordBox.value = password
                return password
            },
            respond: responder.answer)
        do {
            return try authenticator.signInUserAuth(username: username, preferred: method?.factor, handlers: handlers)
        } catch is CodeDidNotMatch {
            throw AuthctlError(.notAuthorized, "The code did not match")
        } catch let error as CognitoError {
            if error.kind == .unsupportedChallenge && error.challengeName == FirstFactor.webAuthn.rawValue {
                throw FirstFactorChoice.passkeyOnly
            }
            if let refused = AccountFailure.signInRefusal(error, username: username) { throw refused }
            throw Self.signInFailure(error, client: client, hasSecret: appClient.clientSecret != nil, wrongCodes: responder.log.wrongCodes)
        }
    }
}

/// The password once read, for the new-password check (it must differ).
final class ReadPassword {
    var value: String?
}

extension SignIn {
    /// `signin --flow user-auth` / `--method`: no password unless a password factor is used.
    func signInUserAuth(sessions: ProfileSession, settings: Settings, client: ClientSettings, context: CommandContext) throws {
        let console = context.console
        if let method = userAuth.method, !method.factor.needsPassword, passwordStdin {
            throw AuthctlError(.usage, "--password-stdin: --method \(method.rawValue) asks no password")
        }
        let givenUsername = username ?? settings.username
        if givenUsername == nil && !console.canPrompt {
            throw AuthctlError(.usage, "no username: pass --username, set AUTHCTL_USERNAME, or set username in the profile")
        }
        // Reach the keyring before anything is sent: a code must not go out to a sign-in that cannot be kept.
        let appClient = try sessions.appClient(client, storeRequired: !noStore)
        guard let name = givenUsername ?? console.prompt("Username: ", secret: false), !name.isEmpty else {
            throw AuthctlError(.usage, "no username given")
        }
        if !noStore { PendingChallenge.discard(context.store, profile: settings.profile) }
        let result: SignInResult
        do {
            result = try PasswordSignIn(context: context, settings: settings, client: client, appClient: appClient,
                                        passwordFromStdin: passwordStdin, mfa: mfa, setupOutput: mfaSetup.mfaSetupOutput)
                .signInUserAuth(username: name, method: userAuth.method)
        } catch is MFASetupHandedOver {
            console.message("The authenticator secret is on stdout. Add it to the app, then within 3 minutes run: \(PendingChallenge.nextCommand(profile: settings.profile))")
            return
        }
        try deliver(result, sessions: sessions, settings: settings, client: client, context: context)
    }
}

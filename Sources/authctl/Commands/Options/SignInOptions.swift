import ArgumentParser
import AuthctlCore
import CognitoClient

extension PasswordFlow: ExpressibleByArgument {}

/// `--flow`: the password flows, or choice-based sign-in (USER_AUTH).
enum SignInFlowChoice: String, ExpressibleByArgument, CaseIterable {
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

/// Who signs in and how, shared by `signin` and `token` (one parse, one validation).
struct SignInOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Username or alias (env AUTHCTL_USERNAME, or the profile's username; asked on a terminal otherwise). token: whom to sign in as when there is no valid session.",
            valueName: "name"))
    var username: String?

    @Flag(
        help: "Read the password from the first line of standard input (and a required new password from the second).")
    var passwordStdin = false

    @Option(
        help:
            "srp: the password never leaves this machine (USER_SRP_AUTH). password: USER_PASSWORD_AUTH. user-auth: choice-based sign-in (USER_AUTH), see --method."
    )
    var flow: SignInFlowChoice?

    @Option(
        help: ArgumentHelp(
            "Sign in with USER_AUTH and this first factor: email-otp, sms-otp, password, srp or passkey (a FIDO2 security key; implies --flow user-auth).",
            valueName: "method"))
    var method: SignInMethod?

    /// USER_AUTH, asked for with `--flow user-auth` or `--method`.
    var usesUserAuth: Bool { method != nil || flow == .userAuth }

    /// The password flow (`--flow`, SRP by default); nil for USER_AUTH.
    var passwordFlow: PasswordFlow? { usesUserAuth ? nil : (flow?.passwordFlow ?? .srp) }

    /// Anything that says how to sign in was given.
    var given: Bool { username != nil || passwordStdin || flow != nil || method != nil }

    func validate() throws {
        // --method implies --flow user-auth; a password flow next to it contradicts it.
        if method != nil, let flow, flow != .userAuth {
            throw ValidationError(
                "--method chooses a first factor of --flow user-auth; it cannot be used with --flow \(flow.rawValue).")
        }
        if let method, !method.factor.needsPassword, passwordStdin {
            throw ValidationError("--password-stdin: --method \(method.rawValue) asks no password.")
        }
    }
}

/// Options for sign-in challenges (multi-factor authentication), shared by `signin` and `token`.
struct MFAOptions: ParsableArguments {
    @Option(
        name: [.customLong("code"), .customLong("mfa-code")],
        help: ArgumentHelp(
            "One-time code for the sign-in (authenticator app, SMS or email; --mfa-code is the same). It is dead within minutes, so the command line is acceptable.",
            valueName: "code"))
    var mfaCode: String?

    @Option(help: "Factor to use when the pool lets the user choose: totp, sms or email.")
    var mfaType: MFAType?

    var given: Bool { mfaCode != nil || mfaType != nil }

    /// The answers for the sign-in pipeline.
    var answers: MFAAnswers { MFAAnswers(mfaCode: mfaCode, mfaType: mfaType) }
}

/// `signin` only: handing an authenticator set-up to a script.
struct MFASetupOptions: ParsableArguments {
    @Option(
        help:
            "When the pool requires setting up an authenticator app: print its secret and otpauth:// URI as json (even on a terminal), then finish with `authctl signin --code CODE`."
    )
    var mfaSetupOutput: MFASetupOutput?
}

extension SignInMethod: ExpressibleByArgument {}
extension MFAType: ExpressibleByArgument {}
extension MFASetupOutput: ExpressibleByArgument {}

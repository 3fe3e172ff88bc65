import CognitoClient

/// `--method`: the first factor to ask USER_AUTH for (PREFERRED_CHALLENGE).
package enum SignInMethod: String, CaseIterable {
    case emailOTP = "email-otp"
    case smsOTP = "sms-otp"
    case password
    case srp
    case passkey

    package var factor: FirstFactor {
        switch self {
        case .emailOTP: return .emailOTP
        case .smsOTP: return .smsOTP
        case .password: return .password
        case .srp: return .passwordSRP
        case .passkey: return .webAuthn
        }
    }

    package static func from(_ factor: FirstFactor) -> SignInMethod? {
        allCases.first { $0.factor == factor }
    }

    package var words: String {
        switch self {
        case .emailOTP: return "a code sent by email"
        case .smsOTP: return "a code sent by text message (SMS)"
        case .password: return "password (sent to Cognito over TLS)"
        case .srp: return "password, proven without sending it (SRP)"
        case .passkey: return "passkey on a security key (FIDO2)"
        }
    }
}

package enum MFAType: String, CaseIterable {
    case totp, sms, email

    package var challengeName: ChallengeName {
        switch self {
        case .totp: return .softwareTokenMFA
        case .sms: return .smsMFA
        case .email: return .emailOTP
        }
    }

    /// The factor a challenge name (or an MFA setting, which uses the same names) stands for.
    package init?(challengeName: ChallengeName) {
        guard let type = Self.allCases.first(where: { $0.challengeName == challengeName }) else { return nil }
        self = type
    }

    package var words: String {
        switch self {
        case .totp: return "authenticator app (TOTP)"
        case .sms: return "text message (SMS)"
        case .email: return "email"
        }
    }
}

package enum MFASetupOutput: String, CaseIterable {
    case json
}

/// `--code` and `--mfa-type`: the answers to an MFA challenge given up front.
package struct MFAAnswers {
    package var mfaCode: String?
    package var mfaType: MFAType?

    package init(mfaCode: String? = nil, mfaType: MFAType? = nil) {
        self.mfaCode = mfaCode
        self.mfaType = mfaType
    }
}

/// Which security key to use and where its PIN comes from, resolved once per command.
package struct SecurityKeyChoice {
    /// The keys named (none: the ones attached).
    package var devicePaths: [String] = []
    package var pinFD: Int32?

    package init(devicePaths: [String] = [], pinFD: Int32? = nil) {
        self.devicePaths = devicePaths
        self.pinFD = pinFD
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A challenge's name as the service sends it (`ChallengeNameType` in the service model). A
/// struct rather than an enum: the service may add names, and an unknown one must still reach
/// the caller (who says it is not supported). Written as a string literal where convenient.
public struct ChallengeName: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public var rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public init(from decoder: Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { rawValue }

    public static let passwordVerifier: ChallengeName = "PASSWORD_VERIFIER"
    public static let newPasswordRequired: ChallengeName = "NEW_PASSWORD_REQUIRED"
    public static let softwareTokenMFA: ChallengeName = "SOFTWARE_TOKEN_MFA"
    public static let smsMFA: ChallengeName = "SMS_MFA"
    public static let emailOTP: ChallengeName = "EMAIL_OTP"
    public static let smsOTP: ChallengeName = "SMS_OTP"
    public static let selectMFAType: ChallengeName = "SELECT_MFA_TYPE"
    public static let mfaSetup: ChallengeName = "MFA_SETUP"
    public static let customChallenge: ChallengeName = "CUSTOM_CHALLENGE"
    public static let deviceSRPAuth: ChallengeName = "DEVICE_SRP_AUTH"
    public static let devicePasswordVerifier: ChallengeName = "DEVICE_PASSWORD_VERIFIER"
    public static let selectChallenge: ChallengeName = "SELECT_CHALLENGE"
    public static let password: ChallengeName = "PASSWORD"
    public static let passwordSRP: ChallengeName = "PASSWORD_SRP"
    public static let webAuthn: ChallengeName = "WEB_AUTHN"

    /// Every name above (a test checks the list against the declarations), so a caller can prove
    /// it handles each one.
    public static let known: [ChallengeName] = [
        .passwordVerifier, .newPasswordRequired, .softwareTokenMFA, .smsMFA, .emailOTP, .smsOTP, .selectMFAType,
        .mfaSetup, .customChallenge, .deviceSRPAuth, .devicePasswordVerifier, .selectChallenge, .password,
        .passwordSRP, .webAuthn,
    ]

    /// The ChallengeResponses field that carries a one-time code for this challenge
    /// (RespondToAuthChallenge in the service model): SMS_MFA is answered with SMS_MFA_CODE,
    /// SOFTWARE_TOKEN_MFA with SOFTWARE_TOKEN_MFA_CODE, EMAIL_OTP with EMAIL_OTP_CODE, SMS_OTP with
    /// SMS_OTP_CODE. Nil for challenges not answered with a code.
    public var codeField: String? {
        isCodeChallenge ? rawValue + "_CODE" : nil
    }

    /// Challenges answered with a one-time code, which a person may retype.
    public var isCodeChallenge: Bool {
        [.softwareTokenMFA, .smsMFA, .emailOTP, .smsOTP].contains(self)
    }

    /// Codes the service sent by text message or email (rather than an authenticator app's).
    public var isDeliveredCode: Bool {
        [.smsMFA, .emailOTP, .smsOTP].contains(self)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Request and response shapes from Cognito's service model (botocore cognito-idp 2016-04-18).
// Swift names are the model's member names in lowerCamelCase; CognitoService converts the case.

public struct AuthenticationResult: Codable, Sendable, Equatable {
    public var accessToken: String
    public var expiresIn: Int?
    public var tokenType: String?
    public var refreshToken: String?
    public var idToken: String?
    /// Set when the pool tracks devices and this one is new to it (see `DeviceSRP`).
    public var newDeviceMetadata: NewDeviceMetadata?

    public init(
        accessToken: String, expiresIn: Int?, tokenType: String?, refreshToken: String?, idToken: String?,
        newDeviceMetadata: NewDeviceMetadata? = nil
    ) {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
        self.tokenType = tokenType
        self.refreshToken = refreshToken
        self.idToken = idToken
        self.newDeviceMetadata = newDeviceMetadata
    }
}

extension AuthenticationResult {
    enum CodingKeys: String, CodingKey {
        case accessToken, expiresIn, tokenType, refreshToken, idToken, newDeviceMetadata
    }

    /// Every answer's tokens are checked as they are read: shapes
    /// (`TokenShape`) and `ExpiresIn` between 0 and a day (else absent: the token's `exp` counts).
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        expiresIn = OutsideNumbers.tokenLifetime(try? container.decodeIfPresent(Double.self, forKey: .expiresIn))
        tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType)
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        idToken = try container.decodeIfPresent(String.self, forKey: .idToken)
        newDeviceMetadata = try container.decodeIfPresent(NewDeviceMetadata.self, forKey: .newDeviceMetadata)
        if let problem = TokenShape.problem(accessToken: accessToken, idToken: idToken, refreshToken: refreshToken) {
            throw TokenShapeError(description: problem)
        }
    }
}

/// The answer of InitiateAuth and RespondToAuthChallenge: tokens, or the next challenge.
public struct AuthResponse: Decodable, Sendable {
    public var challengeName: ChallengeName?
    public var session: String?
    public var challengeParameters: [String: String]?
    public var authenticationResult: AuthenticationResult?
    /// InitiateAuth USER_AUTH without a usable PREFERRED_CHALLENGE: the first factors offered.
    public var availableChallenges: [ChallengeName]?
}

struct InitiateAuthRequest: Encodable {
    var authFlow: String
    var clientId: String
    var authParameters: [String: String]
}

struct GetTokensFromRefreshTokenRequest: Encodable {
    var refreshToken: String
    var clientId: String
    var clientSecret: String?
    /// The remembered device's key: pools that track devices want it on every refresh.
    var deviceKey: String?
}

struct RespondToAuthChallengeRequest: Encodable {
    var clientId: String
    var challengeName: String
    var session: String?
    var challengeResponses: [String: String]
}

struct AccessTokenRequest: Encodable {
    var accessToken: String
}

public struct AttributeType: Codable, Sendable, Equatable {
    public var name: String
    public var value: String?
}

public struct MFAOptionType: Decodable, Sendable, Equatable {
    public var deliveryMedium: String?
    public var attributeName: String?
}

public struct GetUserResponse: Decodable, Sendable {
    public var username: String
    public var userAttributes: [AttributeType]
    /// `SOFTWARE_TOKEN_MFA`, `SMS_MFA` or `EMAIL_OTP`.
    public var preferredMfaSetting: String?
    /// The factors on: those three, and `WEB_AUTHN` with passkey MFA (WebAuthnMfaSettings) on.
    public var userMFASettingList: [String]?
    /// The factors the user has enabled, typed (`userMFASettingList`).
    public var enabledFactors: [ChallengeName] { (userMFASettingList ?? []).map(ChallengeName.init(rawValue:)) }
    /// The preferred factor, typed (`preferredMfaSetting`).
    public var preferredFactor: ChallengeName? { preferredMfaSetting.map(ChallengeName.init(rawValue:)) }
    /// Legacy SMS MFA settings.
    public var mfaOptions: [MFAOptionType]?

    // The key strategy lower-cases only the first letter of the wire name.
    enum CodingKeys: String, CodingKey {
        case username, userAttributes, preferredMfaSetting
        case userMFASettingList = "userMFASettingList"
        case mfaOptions = "mFAOptions"
    }

    /// The value of one attribute, e.g. `email`.
    public func attribute(_ name: String) -> String? {
        userAttributes.first { $0.name == name }?.value
    }
}

extension CognitoService {
    /// GetUser: the signed-in user's name and attributes. Read-only, so retried.
    public func getUser(accessToken: String) throws -> GetUserResponse {
        try call("GetUser", AccessTokenRequest(accessToken: accessToken), idempotent: true)
    }

    func initiateAuth(_ request: InitiateAuthRequest, idempotent: Bool) throws -> AuthResponse {
        try call("InitiateAuth", request, idempotent: idempotent)
    }

    func respondToAuthChallenge(_ request: RespondToAuthChallengeRequest) throws -> AuthResponse {
        // A challenge session answers once: repeating an answer whose outcome is unknown is not safe.
        try call("RespondToAuthChallenge", request, idempotent: false)
    }
}

struct RevokeTokenRequest: Encodable {
    var token: String
    var clientId: String
    var clientSecret: String?
    var revokeAssociatedSessions: LinkedSessions?
}

struct ChangePasswordRequest: Encodable {
    var previousPassword: String
    var proposedPassword: String
    var accessToken: String
}

struct AdminUserRequest: Encodable {
    var userPoolId: String
    var username: String
}

extension CognitoService {
    /// GlobalSignOut: ends every refresh token of the user. Repeating it is harmless.
    public func globalSignOut(accessToken: String) throws {
        _ = try call(
            "GlobalSignOut", AccessTokenRequest(accessToken: accessToken), idempotent: true, as: EmptyResponse.self)
    }

    /// RevokeToken: ends one refresh token and the access tokens it produced; with `.linked`, also
    /// the managed-login (SSO) session it came through. Repeating it is harmless.
    public func revokeToken(refreshToken: String, client: AppClient, linked: LinkedSessions? = nil) throws {
        _ = try call(
            "RevokeToken",
            RevokeTokenRequest(
                token: refreshToken, clientId: client.clientId,
                clientSecret: client.clientSecret, revokeAssociatedSessions: linked),
            idempotent: true, as: EmptyResponse.self)
    }

    /// ChangePassword. Not repeated after an unknown outcome: a second try would present a
    /// "previous" password that may already have been replaced.
    public func changePassword(accessToken: String, previous: String, proposed: String) throws {
        _ = try call(
            "ChangePassword",
            ChangePasswordRequest(
                previousPassword: previous, proposedPassword: proposed,
                accessToken: accessToken),
            idempotent: false, as: EmptyResponse.self)
    }

    /// AdminUserGlobalSignOut (IAM-signed): ends every session of any user of the pool.
    public func adminUserGlobalSignOut(userPoolId: String, username: String) throws {
        _ = try call(
            "AdminUserGlobalSignOut", AdminUserRequest(userPoolId: userPoolId, username: username),
            idempotent: true, as: EmptyResponse.self)
    }
}

// MARK: authenticator apps (TOTP)

struct AssociateSoftwareTokenRequest: Encodable {
    var accessToken: String?
    var session: String?
}

public struct AssociateSoftwareTokenResponse: Decodable, Sendable {
    /// The Base32 TOTP secret to put in an authenticator app.
    public var secretCode: String
    /// A new challenge session (when associating during sign-in).
    public var session: String?
}

struct VerifySoftwareTokenRequest: Encodable {
    var accessToken: String?
    var session: String?
    var userCode: String
    var friendlyDeviceName: String?
}

public struct VerifySoftwareTokenResponse: Decodable, Sendable {
    public var status: String?
    public var session: String?
}

public struct MFASetting: Encodable, Sendable {
    public var enabled: Bool
    public var preferredMfa: Bool

    public init(enabled: Bool, preferred: Bool) {
        self.enabled = enabled
        self.preferredMfa = preferred
    }
}

/// WebAuthnMfaSettings (2026): passkey MFA on or off for the user; no preference (it applies only
/// when a passkey is the first factor).
struct WebAuthnMFASetting: Encodable {
    var enabled: Bool

    enum CodingKeys: String, CodingKey { case enabled = "Enabled" }
}

struct SetUserMFAPreferenceRequest: Encodable {
    var accessToken: String
    var softwareTokenMfaSettings: MFASetting?
    var smsMfaSettings: MFASetting?
    var emailMfaSettings: MFASetting?
    var webAuthnMfaSettings: WebAuthnMFASetting?

    enum CodingKeys: String, CodingKey {
        case accessToken = "AccessToken"
        case softwareTokenMfaSettings = "SoftwareTokenMfaSettings"
        case smsMfaSettings = "SMSMfaSettings"
        case emailMfaSettings = "EmailMfaSettings"
        case webAuthnMfaSettings = "WebAuthnMfaSettings"
    }
}

extension CognitoService {
    /// AssociateSoftwareToken for a signed-in user (access token) or during sign-in (challenge session).
    /// Each call makes a new secret, so it is not repeated after an unknown outcome.
    public func associateSoftwareToken(accessToken: String? = nil, session: String? = nil) throws
        -> AssociateSoftwareTokenResponse
    {
        try call(
            "AssociateSoftwareToken", AssociateSoftwareTokenRequest(accessToken: accessToken, session: session),
            idempotent: false)
    }

    public func verifySoftwareToken(
        accessToken: String? = nil, session: String? = nil, code: String,
        friendlyName: String?
    ) throws -> VerifySoftwareTokenResponse {
        try call(
            "VerifySoftwareToken",
            VerifySoftwareTokenRequest(
                accessToken: accessToken, session: session, userCode: code,
                friendlyDeviceName: friendlyName), idempotent: false)
    }

    /// SetUserMFAPreference: nil leaves a factor as it is. Setting a preference twice is harmless.
    /// `passkey`: passkey MFA (WebAuthnMfaSettings) on or off.
    public func setUserMFAPreference(
        accessToken: String, softwareToken: MFASetting? = nil, sms: MFASetting? = nil,
        email: MFASetting? = nil, passkey: Bool? = nil
    ) throws {
        _ = try call(
            "SetUserMFAPreference",
            SetUserMFAPreferenceRequest(
                accessToken: accessToken, softwareTokenMfaSettings: softwareToken,
                smsMfaSettings: sms, emailMfaSettings: email,
                webAuthnMfaSettings: passkey.map(WebAuthnMFASetting.init(enabled:))),
            idempotent: true, as: EmptyResponse.self)
    }
}

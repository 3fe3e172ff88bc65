#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Temporary AWS credentials from an identity pool. `description` and reflection name the key id
/// and expiry only: the secret key and session token never reach a log or a message.
public struct TemporaryAWSCredentials: Sendable, Equatable, Codable, CustomStringConvertible, CustomReflectable {
    public var accessKeyId: String
    public var secretAccessKey: String
    public var sessionToken: String
    public var expiration: Date

    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String, expiration: Date) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.expiration = expiration
    }

    /// Whether they are still good `margin` seconds from `now`.
    public func validFor(_ margin: Double, now: Date) -> Bool {
        expiration.timeIntervalSince(now) > margin
    }

    public var description: String { "AWS credentials \(accessKeyId) (expire \(expiration))" }

    public var customMirror: Mirror {
        Mirror(self, children: ["accessKeyId": accessKeyId, "expiration": expiration], displayStyle: .struct)
    }
}

/// The answer of GetCredentialsForIdentity: the identity the credentials belong to, and them.
public struct IdentityCredentials: Sendable, Equatable {
    public var identityId: String
    public var credentials: TemporaryAWSCredentials
}

// Wire shapes from botocore's cognito-identity 2014-06-30 model; CognitoService converts the
// member names' case. `Logins` keys are provider names and go on the wire as they are.

struct GetIdRequest: Encodable {
    var accountId: String?
    var identityPoolId: String
    var logins: [String: String]
}

struct GetIdResponse: Decodable {
    var identityId: String?
}

struct GetCredentialsForIdentityRequest: Encodable {
    var identityId: String
    var logins: [String: String]
    var customRoleArn: String?
}

struct GetCredentialsForIdentityResponse: Decodable {
    struct Credentials: Decodable {
        var accessKeyId: String?
        /// The model calls it `SecretKey`; AWS tools call it the secret access key.
        var secretKey: String?
        var sessionToken: String?
        /// `DateType` is a timestamp: JSON 1.1 sends epoch seconds (possibly fractional).
        var expiration: Double?
    }

    var identityId: String?
    var credentials: Credentials?
}

import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Every kind of item authctl keeps, and how each is named in the store: the one place that
/// knows item keys. The keys are those of earlier versions, so items kept before still read.
package enum StoreItem: Equatable {
    /// The signed-in session (`StoredSession`).
    case session
    /// A sign-in waiting for a one-time code or an authenticator set-up (`PendingChallenge`).
    case pendingChallenge
    /// The app client's secret, kept by `authctl configure --client-secret-stdin`.
    case clientSecret(clientId: String)
    /// Cached identity-pool AWS credentials (`AWSCredentialsCache.Entry`); an empty id is any pool's.
    case awsCredentials(identityPoolId: String)
    /// Cached client_credentials tokens by scope set; an empty id is any client's.
    case machineTokens(clientId: String)
    /// A remembered device of a user in a pool (`StoredDevice`): it belongs to this machine,
    /// not to a profile, so it outlives the session (as it does in the service).
    case device(userPoolId: String, username: String)
    /// The pointer from another name a user signed in with (an email alias) to the username.
    case deviceAlias(userPoolId: String, alias: String)

    /// The kinds a profile can keep, as `status` lists them.
    package enum Kind: String, CaseIterable, Codable {
        case session
        case pendingChallenge = "pending-challenge"
        case clientSecret = "client-secret"
        case awsCredentials = "aws-credentials"
        case machineTokens = "machine-token"
        case device
        case deviceAlias = "device-alias"
    }

    package var kind: Kind {
        switch self {
        case .session: return .session
        case .pendingChallenge: return .pendingChallenge
        case .clientSecret: return .clientSecret
        case .awsCredentials: return .awsCredentials
        case .machineTokens: return .machineTokens
        case .device: return .device
        case .deviceAlias: return .deviceAlias
        }
    }

    /// The store's key for this item of `profile`. Devices are keyed by pool and user (usernames
    /// compare without case, as Cognito's do by default), whatever the profile.
    /// `userPoolId` and `clientId` only describe a session or pending sign-in to a person browsing
    /// the keyring (they are not part of its key).
    package func key(profile: String, userPoolId: String = "", clientId: String = "") -> SecretKey {
        switch self {
        case .session, .pendingChallenge:
            return SecretKey(kind: kind.rawValue, profile: profile, userPoolId: userPoolId, clientId: clientId)
        case .clientSecret(let clientId), .machineTokens(let clientId):
            return SecretKey(kind: kind.rawValue, profile: profile, userPoolId: userPoolId, clientId: clientId)
        case .awsCredentials(let identityPoolId):
            return SecretKey(kind: kind.rawValue, profile: profile, userPoolId: userPoolId, clientId: identityPoolId)
        case .device(let pool, let username):
            return SecretKey(kind: kind.rawValue, profile: "\(pool)/\(username.lowercased())", userPoolId: pool)
        case .deviceAlias(let pool, let alias):
            return SecretKey(kind: kind.rawValue, profile: "\(pool)/\(alias.lowercased())", userPoolId: pool)
        }
    }

    /// What a person browsing the keyring sees.
    package func label(profile: String) -> String {
        switch self {
        case .session: return "authctl session (profile \(profile))"
        case .pendingChallenge: return "authctl pending sign-in (profile \(profile))"
        case .clientSecret(let clientId): return "authctl app client secret: \(clientId) (profile \(profile))"
        case .awsCredentials(let pool): return "authctl AWS credentials: identity pool \(pool) (profile \(profile))"
        case .machineTokens(let clientId): return "authctl machine tokens: \(clientId) (profile \(profile))"
        case .device(let pool, let username): return "authctl device: \(username) in \(pool)"
        case .deviceAlias(let pool, let alias): return "authctl device alias: \(alias) in \(pool)"
        }
    }
}

/// The one codec of kept records: JSON with the session format's dates.
package enum StoreRecordCodec {
    package static func encode<Record: Encodable>(_ record: Record) throws -> String {
        String(decoding: try StoredSession.encoder.encode(record), as: UTF8.self)
    }

    /// The record, or nil when the text is not one (damaged, or written by another version).
    package static func decode<Record: Decodable>(_ type: Record.Type, from text: String) -> Record? {
        try? StoredSession.decoder.decode(Record.self, from: Data(text.utf8))
    }
}

/// A device Cognito tracks, as kept on this machine: one item per pool and user, apart from the
/// session, so signing out keeps it (and the next sign-in can skip MFA).
package struct StoredDevice: Codable, Equatable {
    package var version = 1
    package var userPoolId: String
    /// The username Cognito knows (the access token's `username`).
    package var username: String
    package var deviceKey: String
    package var deviceGroupKey: String
    package var devicePassword: String
    package var deviceName: String
    /// UpdateDeviceStatus `remembered` was made, or the pool remembers every device.
    package var remembered: Bool
    package var confirmedAt: Date
    /// Other names the user signed in with (an email alias, say), lowercased: each has a small
    /// pointer item, so the device is found before the sign-in says who the user is.
    package var aliases: [String] = []

    package var credentials: DeviceCredentials {
        DeviceCredentials(deviceKey: deviceKey, deviceGroupKey: deviceGroupKey, devicePassword: devicePassword)
    }
}

/// The cached credentials and identity id of one profile and identity pool (one item, kind
/// `aws-credentials`, `client_id` = the identity pool id). An item for another identity pool of
/// the profile is replaced by it.
package struct CachedAWSCredentials: Codable, Equatable {
    package var version = 1
    package var profile: String
    package var identityPoolId: String
    package var userPoolId: String
    /// The user the identity belongs to (the session's `sub`).
    package var sub: String
    package var roleArn: String?
    package var identityId: String
    package var credentials: TemporaryAWSCredentials
    /// The identity endpoint that issued them: credentials are handed out only for that endpoint
    /// (nil in entries kept by earlier versions, which then count for none).
    package var identityEndpoint: String? = nil
}

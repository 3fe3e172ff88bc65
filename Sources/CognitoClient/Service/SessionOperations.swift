#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// A user's sessions (session tracking, a pool setting of the Essentials tier and above). Shapes
// from Cognito's service model (botocore cognito-idp 1.44.8): ListUserSessions and
// RevokeUserSession (the user's access token), the IAM-signed AdminListUserSessions and
// AdminRevokeUserSession, and GetUserPoolSessionConfiguration.

/// A session's id as the service writes it: `tkn` (a token session, a refresh token's) or `sso`
/// (a managed-login session) and 25 of `[a-z0-9]` (`SessionIdType`'s pattern).
public enum SessionID {
    public static let length = 28

    /// Whether `text` has a session id's shape: checked before it is sent, and before an
    /// answer's id is used.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == length else { return false }
        let prefix = String(decoding: bytes[0..<3], as: UTF8.self)
        guard prefix == "tkn" || prefix == "sso" else { return false }
        return bytes[3...].allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
    }
}

/// `SessionTypeType`.
public enum UserSessionKind: String, Sendable, Equatable, CaseIterable {
    /// A token session: one sign-in's refresh token and the tokens it produced.
    case token = "TOKEN"
    /// A managed-login (SSO) session: the hosted UI's cookie, which starts token sessions.
    case sso = "SSO"
}

/// `SessionLocationType`: where the service places the session's last IP address. Outside text.
public struct UserSessionLocation: Decodable, Sendable, Equatable {
    public var city: String?
    public var country: String?

    public init(city: String? = nil, country: String? = nil) {
        self.city = city
        self.country = country
    }
}

/// `SessionDescriptionType`: one active session of a user. Every string is outside text (the
/// device type is parsed from a User-Agent anyone can write): callers print it escaped. Strings
/// longer than the model allows are cut to its maximum when decoded.
public struct UserSession: Decodable, Sendable, Equatable {
    public var sessionId: String?
    /// The service's `SessionType` as it came; `kind` reads it.
    public var sessionType: String?
    public var clientId: String?
    /// Seconds since the epoch (the protocol's timestamps).
    public var createDate: Double?
    public var lastActiveDate: Double?
    public var deviceType: String?
    public var lastIPAddress: String?
    public var lastLocation: UserSessionLocation?
    /// For a token session, the SSO session it came through.
    public var originSessionId: String?
    /// True for the session of the access token that listed it (always false for the Admin form).
    public var isCurrentSession: Bool?

    public init(
        sessionId: String?, sessionType: String? = nil, clientId: String? = nil, createDate: Double? = nil,
        lastActiveDate: Double? = nil, deviceType: String? = nil, lastIPAddress: String? = nil,
        lastLocation: UserSessionLocation? = nil, originSessionId: String? = nil, isCurrentSession: Bool? = nil
    ) {
        self.sessionId = sessionId
        self.sessionType = sessionType
        self.clientId = clientId
        self.createDate = createDate
        self.lastActiveDate = lastActiveDate
        self.deviceType = deviceType
        self.lastIPAddress = lastIPAddress
        self.lastLocation = lastLocation
        self.originSessionId = originSessionId
        self.isCurrentSession = isCurrentSession
    }

    enum CodingKeys: String, CodingKey {
        case sessionId, sessionType, clientId, createDate, lastActiveDate, deviceType, lastLocation
        case lastIPAddress, originSessionId, isCurrentSession
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func text(_ key: CodingKeys, max: Int) throws -> String? {
            try c.decodeIfPresent(String.self, forKey: key).map { String($0.prefix(max)) }
        }
        sessionId = try text(.sessionId, max: SessionID.length)
        sessionType = try text(.sessionType, max: 16)
        clientId = try text(.clientId, max: 128)
        createDate = try c.decodeIfPresent(Double.self, forKey: .createDate)
        lastActiveDate = try c.decodeIfPresent(Double.self, forKey: .lastActiveDate)
        deviceType = try text(.deviceType, max: 1024)
        lastIPAddress = try text(.lastIPAddress, max: 128)
        lastLocation = try c.decodeIfPresent(UserSessionLocation.self, forKey: .lastLocation).map {
            UserSessionLocation(
                city: $0.city.map { String($0.prefix(256)) }, country: $0.country.map { String($0.prefix(256)) })
        }
        originSessionId = try text(.originSessionId, max: SessionID.length)
        isCurrentSession = try c.decodeIfPresent(Bool.self, forKey: .isCurrentSession)
    }

    /// The session's type; nil for one this client does not know.
    public var kind: UserSessionKind? { sessionType.flatMap(UserSessionKind.init(rawValue:)) }

    /// The session's id when it has a session id's shape (an answer's is not trusted blindly).
    public var validId: String? { sessionId.flatMap { SessionID.isValid($0) ? $0 : nil } }

    public var created: Date? { createDate.map { Date(timeIntervalSince1970: $0) } }
    public var lastActive: Date? { lastActiveDate.map { Date(timeIntervalSince1970: $0) } }
}

/// `RevokeAssociatedSessionsType`: what else a revocation ends.
public enum LinkedSessions: String, Encodable, Sendable, Equatable {
    /// Only the session named.
    case none = "NONE"
    /// Also its linked sessions: a token session's parent SSO session, an SSO session's token sessions.
    case linked = "LINKED"
}

/// GetUserPoolSessionConfiguration's answer.
public struct UserPoolSessionConfiguration: Decodable, Sendable, Equatable {
    public struct TokenSession: Decodable, Sendable, Equatable {
        public var maxPerUser: Int?
    }
    public var userPoolId: String?
    /// `ENABLED` or `DISABLED`.
    public var userSessionTracking: String?
    public var tokenSession: TokenSession?

    public var trackingEnabled: Bool { userSessionTracking == "ENABLED" }
}

struct ListUserSessionsRequest: Encodable {
    var accessToken: String
    var nextToken: String?
}

struct AdminListUserSessionsRequest: Encodable {
    var userPoolId: String
    var username: String
    var nextToken: String?
}

struct ListUserSessionsResponse: Decodable {
    var sessions: [UserSession]?
    var nextToken: String?
}

struct RevokeUserSessionRequest: Encodable {
    var accessToken: String
    var sessionId: String
    var revokeAssociatedSessions: LinkedSessions?
}

struct AdminRevokeUserSessionRequest: Encodable {
    var userPoolId: String
    var username: String
    var sessionId: String
    var revokeAssociatedSessions: LinkedSessions?
}

struct UserPoolIdRequest: Encodable {
    var userPoolId: String
}

extension CognitoService {
    /// ListUserSessions, every page: the signed-in user's sessions across the pool's app clients.
    /// Read-only, so retried. A pool without session tracking refuses it
    /// (`ServiceRefusal.sessionTrackingDisabled`).
    public func listUserSessions(accessToken: String) throws -> [UserSession] {
        try everySessionPage { token in
            try call(
                "ListUserSessions", ListUserSessionsRequest(accessToken: accessToken, nextToken: token),
                idempotent: true)
        }
    }

    /// RevokeUserSession: ends one of the user's sessions (all its refresh and access tokens), not
    /// the caller's own. Repeating it is harmless (a second one answers ResourceNotFoundException).
    public func revokeUserSession(accessToken: String, sessionId: String, linked: LinkedSessions = .none) throws {
        guard SessionID.isValid(sessionId) else { throw CognitoError.invalidInput("not a session id") }
        _ = try call(
            "RevokeUserSession",
            RevokeUserSessionRequest(
                accessToken: accessToken, sessionId: sessionId, revokeAssociatedSessions: linked),
            idempotent: true, as: EmptyResponse.self)
    }

    /// AdminListUserSessions (IAM-signed), every page. `isCurrentSession` is always false.
    public func adminListUserSessions(userPoolId: String, username: String) throws -> [UserSession] {
        try everySessionPage { token in
            try call(
                "AdminListUserSessions",
                AdminListUserSessionsRequest(userPoolId: userPoolId, username: username, nextToken: token),
                idempotent: true)
        }
    }

    /// AdminRevokeUserSession (IAM-signed): ends one session of a user. Repeating it is harmless.
    public func adminRevokeUserSession(
        userPoolId: String, username: String, sessionId: String, linked: LinkedSessions = .none
    ) throws {
        guard SessionID.isValid(sessionId) else { throw CognitoError.invalidInput("not a session id") }
        _ = try call(
            "AdminRevokeUserSession",
            AdminRevokeUserSessionRequest(
                userPoolId: userPoolId, username: username, sessionId: sessionId, revokeAssociatedSessions: linked),
            idempotent: true, as: EmptyResponse.self)
    }

    /// GetUserPoolSessionConfiguration (IAM-signed): whether the pool tracks sessions.
    public func getUserPoolSessionConfiguration(userPoolId: String) throws -> UserPoolSessionConfiguration {
        try call(
            "GetUserPoolSessionConfiguration", UserPoolIdRequest(userPoolId: userPoolId), idempotent: true)
    }

    private func everySessionPage(_ page: (String?) throws -> ListUserSessionsResponse) throws -> [UserSession] {
        try everyPage { token in
            let answer = try page(token)
            return (answer.sessions ?? [], answer.nextToken)
        }
    }
}

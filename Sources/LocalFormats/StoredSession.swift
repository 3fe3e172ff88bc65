import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A signed-in session as kept in the Secret Service (the whole item's secret, as JSON).
public struct StoredSession: Codable, Equatable, Sendable {
    public var version = 1
    public var profile: String
    /// The username Cognito knows (the access token's `username`), not an alias typed at sign-in.
    public var username: String
    public var sub: String
    public var userPoolId: String
    public var clientId: String
    public var region: String
    public var endpoint: String
    public var accessToken: String
    public var idToken: String
    public var refreshToken: String
    public var accessTokenExpiresAt: Date
    public var issuedAt: Date
    /// A browser session (signed in through the managed login): its domain, where it is refreshed
    /// and revoked, and the sign-out URL its logout link returns to. Nil for a password sign-in.
    public var domain: String? = nil
    public var logoutURI: String? = nil
    /// The replica's region when the replica (`--failover-region`) issued the tokens; nil: the
    /// primary's (`region`). `region` and `endpoint` stay the primary's: the pair is one.
    public var issuingRegion: String? = nil
    /// The replica's endpoint configured at sign-in: the only one the
    /// session's tokens may fail over to. Nil: the session fails over nowhere.
    public var replicaEndpoint: String? = nil
    /// Tokens exchanged for one audience or resource (`token --audience`), by `DerivedTokenRecord.key`:
    /// kept with the session they were derived from, so they end with it (signout, a new sign-in).
    public var derivedTokens: [String: DerivedTokenRecord]? = nil

    /// Why a sign-in's answer makes no session.
    public enum Failure: Error, Equatable {
        case noRefreshToken
    }

    /// Builds a session from a sign-in's tokens; identity comes from the access token's claims.
    /// Throws `Failure.noRefreshToken`, or the `JWTError` of an unreadable access token.
    public init(
        tokens: AuthenticationResult, fallbackUsername: String, profile: String, userPoolId: String,
        clientId: String, region: String, endpoint: String, now: Date
    ) throws {
        guard let refreshToken = tokens.refreshToken else { throw Failure.noRefreshToken }
        let claims = try JWTClaims(token: tokens.accessToken)
        self.profile = profile
        self.username = claims.username ?? fallbackUsername
        self.sub = claims.subject ?? ""
        self.userPoolId = userPoolId
        self.clientId = clientId
        self.region = region
        self.endpoint = endpoint
        self.accessToken = tokens.accessToken
        self.idToken = tokens.idToken ?? ""
        self.refreshToken = refreshToken
        self.accessTokenExpiresAt = StoredSession.expiry(of: tokens, claims: claims, now: now)
        self.issuedAt = StoredSession.wholeSecond(now)
    }

    /// Takes refreshed tokens; keeps the refresh token unless the service rotated it.
    public mutating func apply(refreshed tokens: AuthenticationResult, now: Date) throws {
        let claims = try JWTClaims(token: tokens.accessToken)
        accessToken = tokens.accessToken
        if let idToken = tokens.idToken { self.idToken = idToken }
        if let refreshToken = tokens.refreshToken { self.refreshToken = refreshToken }
        accessTokenExpiresAt = StoredSession.expiry(of: tokens, claims: claims, now: now)
        issuedAt = StoredSession.wholeSecond(now)
    }

    /// The earlier of ExpiresIn and the token's own `exp`: never trust a token longer than it says.
    /// An ExpiresIn beyond a year is no access token's (Cognito's last at most a day): ignored.
    /// In whole seconds, rounded down, as the item keeps it.
    public static func expiry(of tokens: AuthenticationResult, claims: JWTClaims, now: Date) -> Date {
        let fromExpiresIn = tokens.expiresIn.flatMap { OutsideNumbers.seconds(Double($0), atMost: 366 * 86400) }
            .map { now.addingTimeInterval($0) }
        switch (fromExpiresIn, claims.expiresAt) {
        case (let a?, let b?): return wholeSecond(min(a, b))
        case (let a?, nil): return wholeSecond(a)
        case (nil, let b?): return wholeSecond(b)
        case (nil, nil): return wholeSecond(now.addingTimeInterval(3600))
        }
    }

    /// The item's dates are ISO 8601 in whole seconds: a fraction kept in memory would be lost on
    /// the next write, and the session read back would not be the one stored (found by the
    /// `stored-session` fuzz target: a token whose `exp` has a fraction). Rounded down, so an
    /// expiry is never later than the token's.
    static func wholeSecond(_ date: Date) -> Date {
        Date(timeIntervalSince1970: date.timeIntervalSince1970.rounded(.down))
    }

    public func expiresWithin(_ seconds: Double, now: Date) -> Bool {
        accessTokenExpiresAt.timeIntervalSince(now) <= seconds
    }

    public var label: String { "authctl session: \(username) in \(userPoolId) (profile \(profile))" }

    /// Whether `name` is this session's user: the username Cognito knows, or an alias the id
    /// token carries (email, phone number, preferred username), compared as Cognito does by default.
    public func isSignedIn(as name: String) -> Bool {
        let claims = try? JWTClaims(token: idToken)
        let names = [
            username, claims?.string("cognito:username"), claims?.email,
            claims?.string("phone_number"), claims?.string("preferred_username"),
        ]
        return names.contains { $0?.lowercased() == name.lowercased() }
    }

    /// The JSON of the Secret Service items (sessions and pending challenges): `LocalJSON`.
    public static let encoder = LocalJSON.encoder
    public static let decoder = LocalJSON.decoder
}

/// A token GetDerivedToken issued from the session's access token, as cached in the session's item.
public struct DerivedTokenRecord: Codable, Equatable, Sendable {
    public var accessToken: String
    public var expiresAt: Date
    /// The scopes granted (the service's answer, else the token's `scope` claim).
    public var scopes: [String]
    public var tokenType: String

    public init(accessToken: String, expiresAt: Date, scopes: [String], tokenType: String) {
        self.accessToken = accessToken
        self.expiresAt = expiresAt
        self.scopes = scopes
        self.tokenType = tokenType
    }

    /// The cache's key: everything that makes the answer (the audience or resource, and the scopes asked).
    public static func key(audience: String?, resource: String?, scopes: [String]) -> String {
        let target = audience.map { "audience=\($0)" } ?? "resource=\(resource ?? "")"
        return target + " scopes=" + scopes.sorted().joined(separator: " ")
    }

    /// The most a session's item keeps (the soonest to expire are dropped first).
    public static let maxKept = 32
}

import CognitoClient
import Foundation
import SecureStore

/// A signed-in session as kept in the Secret Service (the whole item's secret, as JSON).
struct StoredSession: Codable, Equatable {
    var version = 1
    var profile: String
    /// The username Cognito knows (the access token's `username`), not an alias typed at sign-in.
    var username: String
    var sub: String
    var userPoolId: String
    var clientId: String
    var region: String
    var endpoint: String
    var accessToken: String
    var idToken: String
    var refreshToken: String
    var accessTokenExpiresAt: Date
    var issuedAt: Date
    /// A browser session (signed in through the managed login): its domain, where it is refreshed
    /// and revoked, and the sign-out URL its logout link returns to. Nil for a password sign-in.
    var domain: String? = nil
    var logoutURI: String? = nil

    /// Builds a session from a sign-in's tokens; identity comes from the access token's claims.
    init(tokens: AuthenticationResult, fallbackUsername: String, profile: String, client: ClientSettings, now: Date) throws {
        guard let refreshToken = tokens.refreshToken else {
            throw AuthctlError(.unexpected, "the service signed in without a refresh token")
        }
        let claims = try JWTClaims(token: tokens.accessToken)
        self.profile = profile
        self.username = claims.username ?? fallbackUsername
        self.sub = claims.subject ?? ""
        self.userPoolId = client.userPoolId
        self.clientId = client.clientId
        self.region = client.region
        self.endpoint = client.endpoint
        self.accessToken = tokens.accessToken
        self.idToken = tokens.idToken ?? ""
        self.refreshToken = refreshToken
        self.accessTokenExpiresAt = StoredSession.expiry(of: tokens, claims: claims, now: now)
        self.issuedAt = now
    }

    /// Takes refreshed tokens; keeps the refresh token unless the service rotated it.
    mutating func apply(refreshed tokens: AuthenticationResult, now: Date) throws {
        let claims = try JWTClaims(token: tokens.accessToken)
        accessToken = tokens.accessToken
        if let idToken = tokens.idToken { self.idToken = idToken }
        if let refreshToken = tokens.refreshToken { self.refreshToken = refreshToken }
        accessTokenExpiresAt = StoredSession.expiry(of: tokens, claims: claims, now: now)
        issuedAt = now
    }

    /// The earlier of ExpiresIn and the token's own `exp`: never trust a token longer than it says.
    /// An ExpiresIn beyond a year is no access token's (Cognito's last at most a day): ignored.
    static func expiry(of tokens: AuthenticationResult, claims: JWTClaims, now: Date) -> Date {
        let fromExpiresIn = tokens.expiresIn.flatMap { OutsideNumbers.seconds(Double($0), atMost: 366 * 86400) }
            .map { now.addingTimeInterval($0) }
        switch (fromExpiresIn, claims.expiresAt) {
        case let (a?, b?): return min(a, b)
        case let (a?, nil): return a
        case let (nil, b?): return b
        case (nil, nil): return now.addingTimeInterval(3600)
        }
    }

    func expiresWithin(_ seconds: Double, now: Date) -> Bool {
        accessTokenExpiresAt.timeIntervalSince(now) <= seconds
    }

    var label: String { "authctl session: \(username) in \(userPoolId) (profile \(profile))" }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()
}

/// Moves sessions between the executable and the Secret Service.
struct SessionRepository {
    let store: SecretStore

    static func key(profile: String, userPoolId: String = "", clientId: String = "") -> SecretKey {
        SecretKey(kind: "session", profile: profile, userPoolId: userPoolId, clientId: clientId)
    }

    func load(profile: String) throws -> StoredSession? {
        guard let json = try store.read(Self.key(profile: profile)) else { return nil }
        do {
            return try StoredSession.decoder.decode(StoredSession.self, from: Data(json.utf8))
        } catch {
            throw SessionError.unreadable(profile: profile)
        }
    }

    /// Replaces the profile's item whole.
    func save(_ session: StoredSession) throws {
        let data = try StoredSession.encoder.encode(session)
        try store.write(Self.key(profile: session.profile, userPoolId: session.userPoolId, clientId: session.clientId),
                        label: session.label, secret: String(decoding: data, as: UTF8.self))
    }

    @discardableResult
    func delete(profile: String) throws -> Bool {
        try store.delete(Self.key(profile: profile))
    }

    /// The app client's secret kept by `authctl configure`, if any, and only for that client: a
    /// secret left from another client would be sent as a SECRET_HASH the service refuses.
    func clientSecret(profile: String, clientId: String) throws -> String? {
        try store.read(SecretKey(kind: "client-secret", profile: profile, clientId: clientId))
    }

    @discardableResult
    func deleteClientSecret(profile: String) throws -> Bool {
        try store.delete(SecretKey(kind: "client-secret", profile: profile))
    }

    func saveClientSecret(_ secret: String, profile: String, userPoolId: String, clientId: String) throws {
        try store.write(SecretKey(kind: "client-secret", profile: profile, userPoolId: userPoolId, clientId: clientId),
                        label: "authctl app client secret: \(clientId) (profile \(profile))", secret: secret)
    }
}

extension StoredSession {
    /// Whether `name` is this session's user: the username Cognito knows, or an alias the id
    /// token carries (email, phone number, preferred username), compared as Cognito does by default.
    func isSignedIn(as name: String) -> Bool {
        let claims = try? JWTClaims(token: idToken)
        let names = [username, claims?.string("cognito:username"), claims?.email,
                     claims?.string("phone_number"), claims?.string("preferred_username")]
        return names.contains { $0?.lowercased() == name.lowercased() }
    }
}

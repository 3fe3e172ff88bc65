import CognitoClient
import Foundation
import LocalFormats
import SecureStore

extension StoredSession {
    /// A session from a sign-in's tokens for the checked settings of one command.
    /// Every sign-in (password, SRP, USER_AUTH, browser) makes its session here: the tokens' claims
    /// are checked first (`IssuedTokens`), so no other pool's, client's or user's tokens are kept.
    init(tokens: AuthenticationResult, fallbackUsername: String, profile: String, client: ClientSettings, now: Date) throws {
        try IssuedTokens.check(accessToken: tokens.accessToken, idToken: tokens.idToken, issuer: client.issuer, clientId: client.clientId)
        do {
            try self.init(tokens: tokens, fallbackUsername: fallbackUsername, profile: profile, userPoolId: client.userPoolId,
                          clientId: client.clientId, region: client.region, endpoint: client.endpoint, now: now)
        } catch StoredSession.Failure.noRefreshToken {
            throw AuthctlError(.unexpected, "the service signed in without a refresh token")
        }
    }
}

extension ClientSettings {
    /// The `iss` of the pool's tokens.
    var issuer: String {
        TokenExpectations(region: region, userPoolId: userPoolId, use: .access, clientId: clientId).issuer
    }
}

extension StoredSession {
    /// Whom the session's tokens belong to, for the check of a refresh's.
    var holder: IssuedTokens.Holder? {
        guard let claims = try? JWTClaims(token: accessToken), let subject = claims.subject else { return nil }
        return IssuedTokens.Holder(subject: subject, username: claims.username)
    }
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

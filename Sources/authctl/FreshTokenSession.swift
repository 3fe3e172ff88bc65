import CognitoClient
import Foundation

extension SessionKeeper {
    /// `freshSession`, and also a refresh when the id token is the one asked for and expires
    /// within `minValidity` (an app client may give id tokens a shorter life than access tokens).
    func freshSession(minValidity: Double, for type: TokenType) throws -> StoredSession {
        var (session, _) = try freshSession(minValidity: minValidity)
        guard type == .id, let idExpiry = (try? JWTClaims(token: session.idToken))?.expiresAt,
              idExpiry.timeIntervalSince(context.now()) <= minValidity else { return session }
        // Asking for more validity than the access token has left makes the refresh due.
        (session, _) = try freshSession(minValidity: session.accessTokenExpiresAt.timeIntervalSince(context.now()) + 1)
        return session
    }
}

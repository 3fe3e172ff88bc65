import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension StoredSession {
    /// A session from a sign-in's tokens for the checked settings of one command.
    /// Every sign-in (password, SRP, USER_AUTH, browser) makes its session here: the tokens' claims
    /// are checked first (`IssuedTokens`), so no other pool's, client's or user's tokens are kept.
    package init(
        tokens: AuthenticationResult, fallbackUsername: String, profile: String, client: ClientSettings, now: Date
    ) throws {
        try IssuedTokens.check(
            accessToken: tokens.accessToken, idToken: tokens.idToken, issuers: client.acceptedIssuers,
            clientId: client.clientId)
        do {
            try self.init(
                tokens: tokens, fallbackUsername: fallbackUsername, profile: profile, userPoolId: client.userPoolId,
                clientId: client.clientId, region: client.region, endpoint: client.endpoint, now: now)
            replicaEndpoint = client.replica?.endpoint
        } catch StoredSession.Failure.noRefreshToken {
            throw AuthctlError(.unexpected, "the service signed in without a refresh token")
        }
    }
}

extension ClientSettings {
    /// Every `iss` the pool's tokens may carry (the original and the updated issuer).
    package var acceptedIssuers: [String] {
        TokenExpectations(region: region, userPoolId: userPoolId, use: .access, clientId: clientId).acceptedIssuers
    }
}

extension StoredSession {
    /// Whom the session's tokens belong to, for the check of a refresh's.
    package var holder: IssuedTokens.Holder? {
        guard let claims = try? JWTClaims(token: accessToken), let subject = claims.subject else { return nil }
        return IssuedTokens.Holder(subject: subject, username: claims.username)
    }
}

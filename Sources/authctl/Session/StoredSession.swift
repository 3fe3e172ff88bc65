import CognitoClient
import Foundation
import LocalFormats

extension StoredSession {
    /// A session from a sign-in's tokens for the checked settings of one command.
    init(tokens: AuthenticationResult, fallbackUsername: String, profile: String, client: ClientSettings, now: Date) throws {
        do {
            try self.init(tokens: tokens, fallbackUsername: fallbackUsername, profile: profile, userPoolId: client.userPoolId,
                          clientId: client.clientId, region: client.region, endpoint: client.endpoint, now: now)
        } catch StoredSession.Failure.noRefreshToken {
            throw AuthctlError(.unexpected, "the service signed in without a refresh token")
        }
    }
}

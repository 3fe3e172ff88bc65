import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The session layer's app client: the client settings a session is for, and its secret
/// (the environment, else the store).
extension ProfileSession {
    // MARK: the app client

    /// The session's own pool and client (its refresh token belongs to them); the endpoint and
    /// region configured now, else the ones it was signed in with. Another endpoint than the
    /// session's is refused (exit 78): every request made with a session's tokens is made here.
    package func clientSettings(for session: StoredSession) throws -> ClientSettings {
        var effective = settings
        effective.userPoolId = session.userPoolId
        effective.clientId = session.clientId
        if effective.region == nil || settings.userPoolId != session.userPoolId { effective.region = session.region }
        if effective.endpoint == nil { effective.endpoint = session.endpoint }
        let client = try ClientSettings(effective)
        try client.checkBound(to: session)
        return client
    }

    /// Refuses to hand out a session made for another pool or client than the one configured now.
    package func checkConfiguredClient(_ session: StoredSession) throws {
        let poolDiffers = settings.userPoolId.map { $0 != session.userPoolId } ?? false
        let clientDiffers = settings.clientId.map { $0 != session.clientId } ?? false
        guard poolDiffers || clientDiffers else { return }
        throw SessionError.otherClient(
            profile: profile, stored: (session.userPoolId, session.clientId),
            configured: (settings.userPoolId ?? session.userPoolId, settings.clientId ?? session.clientId))
    }

    /// The app client with its secret: AUTHCTL_CLIENT_SECRET, else the keyring item that
    /// `authctl configure` wrote. `storeRequired: false` tolerates a missing keyring.
    package func appClient(_ client: ClientSettings, storeRequired: Bool = true) throws -> AppClient {
        AppClient(
            userPoolId: client.userPoolId, clientId: client.clientId,
            clientSecret: try clientSecret(clientId: client.clientId, storeRequired: storeRequired))
    }

    /// The app client's secret, if it has one: AUTHCTL_CLIENT_SECRET, else the keyring's item.
    package func clientSecret(clientId: String, storeRequired: Bool = true) throws -> String? {
        if let secret = settings.clientSecret { return secret }
        do {
            return try store.clientSecret(clientId: clientId)
        } catch is SecureStoreError where !storeRequired {
            return nil
        }
    }

    /// `configure --client-secret-stdin`: keeps the secret of the configured app client.
    package func keepClientSecret(_ secret: String) throws {
        try store.keepClientSecret(secret, userPoolId: settings.userPoolId ?? "", clientId: settings.clientId ?? "")
    }

    /// Removes the profile's kept client secret (it belonged to another app client).
    @discardableResult
    package func forgetClientSecret() throws -> Bool {
        try store.forgetClientSecret()
    }
}

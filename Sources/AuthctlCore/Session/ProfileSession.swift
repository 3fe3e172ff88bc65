import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The session layer: the one owner of a profile's stored session and of its lock (as GitHub
/// CLI's AuthConfig owns its hosts' tokens). Commands ask it for named operations: read the
/// session, get a fresh one, replace it after a sign-in, sign in or reuse one, end or remove it.
/// They never reach the keyring or the lock themselves.
///
/// Everything that stores or removes a session does it through a `LockedSession`, which only
/// `locked(_:)` hands out while it holds the profile's lock: taking the lock twice, or writing
/// without it, cannot be written.
///
/// Its responsibilities, one file each: the session's life here (reading, the lock, revoking,
/// ending, removing: this file), the app client and its secret (`SessionClient.swift`), a fresh
/// session and calls under a `SessionPolicy` with refresh and failover (`SessionRefresh.swift`),
/// a new session after a sign-in and sign-in-or-reuse (`SessionSignIn.swift`).
///
/// It is the profile's session service: `CommandContext.profileSession` makes one per invocation,
/// holding the resolved settings, the configured app client's settings, the profile's store and
/// (through the context) the transport.
package struct ProfileSession {
    package let context: CommandContext
    package let settings: Settings
    /// Everything kept for the profile (the session is this layer's; the rest its flows').
    package let store: ProfileStore
    /// The configured app client's settings, made once (or why they cannot be: not configured).
    private let configuredClient: Result<ClientSettings, any Error>

    package var profile: String { settings.profile }

    /// The app client the settings configure (pool, client, region, endpoint, replica); throws
    /// the configuration error when they name none.
    package var client: ClientSettings {
        get throws { try configuredClient.get() }
    }

    // MARK: the lock

    /// Runs `body` with the profile locked (waiting for another process's refresh or sign-in).
    package func withLockedSession<T>(_ body: (LockedSession) throws -> T) throws -> T {
        try store.withLockedSession(body)
    }

    // MARK: reading

    /// The stored session, if any. Throws `SessionError.unreadable`, or the keyring's error.
    package func stored() throws -> StoredSession? {
        try store.session()
    }

    /// The stored session; `SessionError.notSignedIn` without one. Makes no request.
    package func signedIn() throws -> StoredSession {
        guard let session = try stored() else {
            let pinnedToKernel = store.source.isRecorded(profile) && (try? store.storeKind) == .kernelKeyring
            throw SessionError.notSignedIn(
                profile: profile, keptIn: pinnedToKernel ? StoreKind.kernelKeyring.name : nil)
        }
        return session
    }

    /// What the store holds for `profile` (any profile: `status` lists them all).
    package func item(of profile: String) throws -> SessionItem {
        do {
            return try context.profileStore(profile).session().map(SessionItem.session) ?? .none
        } catch SessionError.unreadable {
            return .unreadable
        }
    }

    /// Revokes a session's refresh token where it came from: the managed login's /oauth2/revoke
    /// for a browser session, RevokeToken for a password one.
    /// `client`, `appClient`: the ones a sign-in just used (not made again, the secret not read
    /// from the store again).
    /// `linked`: RevokeToken with RevokeAssociatedSessions LINKED, which also ends the managed-login
    /// (SSO) session the tokens came through (the token endpoint's /oauth2/revoke has no such field).
    package func revoke(
        _ session: StoredSession, client knownClient: ClientSettings? = nil, appClient known: AppClient? = nil,
        linked: Bool = false
    ) throws {
        let client = try knownClient ?? clientSettings(for: session)
        if let domain = session.domain, !linked {
            let endpoint = TokenEndpoint(
                domain: ManagedLoginDomain(domain), transport: try context.transport(),
                client: try known ?? appClient(client))
            do {
                try endpoint.revoke(refreshToken: session.refreshToken)
            } catch let error as OAuthError {
                throw Failover.managedLoginFailure(error, domain: domain, settings: settings)
            }
        } else {
            let app = try known ?? appClient(client)
            try failingOver("revoking the refresh token", client: client) { service, _, _ in
                try service.revokeToken(refreshToken: session.refreshToken, client: app, linked: linked ? .linked : nil)
            }
        }
    }

    // MARK: ending

    /// Removes `session`, which the service no longer accepts, and returns the error that says so
    /// (or that it could not be removed, with the keyring's error and exit code). Only while the
    /// store still holds that session: one another process signed in or refreshed meanwhile is
    /// never removed in its place.
    package func end(_ session: StoredSession, reason: String) -> Error {
        do {
            return try withLockedSession { locked in end(session, reason: reason, in: locked) }
        } catch {
            return notRemoved(error, reason: reason)
        }
    }

    /// `end` while the caller holds the lock.
    package func end(_ session: StoredSession, reason: String, in locked: LockedSession) -> Error {
        do {
            guard try locked.remove(ifStill: session) else {
                return SessionError.replacedMeanwhile(profile: profile, reason: reason)
            }
        } catch {
            return notRemoved(error, reason: reason)
        }
        return SessionError.ended(profile: profile, reason: reason)
    }

    private func notRemoved(_ error: Error, reason: String) -> SessionError {
        let failure = AuthctlError.from(error)
        return .endedButNotRemoved(profile: profile, reason: reason, failure: failure.message, code: failure.code)
    }

    /// Deletes the profile's session under the lock (so a refresh under way cannot store it again
    /// after it is deleted); returns the failure rather than throwing, for the report to say.
    package func remove() -> Error? {
        do {
            try withLockedSession { locked in _ = try locked.remove() }
            return nil
        } catch {
            return error
        }
    }

    /// After DeleteUser: removes what the profile keeps of the deleted account, under the lock.
    package func removeDeletedAccount(_ session: StoredSession) throws -> [StoreItem.Kind] {
        try withLockedSession { locked in
            try locked.removeDeletedAccount(userPoolId: session.userPoolId, username: session.username)
        }
    }

    /// `signout` on this device, under the lock from reading to removing (a parallel refresh
    /// cannot store the session again after it is deleted). `revoke` revokes the stored session's
    /// refresh token (it reports, rather than throws, its failure).
    package func signOutLocally(revoke: (StoredSession) -> Bool) throws -> LocalSignOut {
        try withLockedSession { locked in
            let session: StoredSession
            do {
                guard let loaded = try locked.load() else { return .notSignedIn }
                session = loaded
            } catch SessionError.unreadable {
                // Nothing in it can be revoked, but an unusable item must not stay.
                return .unreadable(removal: Self.attempt { _ = try locked.remove() })
            }
            let revoked = revoke(session)
            return .signedOut(session, revoked: revoked, removal: Self.attempt { _ = try locked.remove() })
        }
    }

    private static func attempt(_ body: () throws -> Void) -> Error? {
        do {
            try body()
            return nil
        } catch { return error }
    }

    package init(context: CommandContext, settings: Settings) {
        self.context = context
        self.settings = settings
        store = context.profileStore(settings.profile)
        configuredClient = Result { try ClientSettings(settings) }
    }
}

/// What the store holds for a profile's session.
package enum SessionItem {
    case none
    case session(StoredSession)
    /// An item that cannot be decoded (damaged, or written by another version).
    case unreadable
}

/// How `signOutLocally` went.
package enum LocalSignOut {
    case notSignedIn
    /// The item could not be decoded; `removal` is why it could not be removed, if it could not.
    case unreadable(removal: Error?)
    /// `revoked`: the refresh token was revoked; `removal` as above.
    case signedOut(StoredSession, revoked: Bool, removal: Error?)
}

import CognitoClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LocalFormats
import SecureStore

/// The session layer: the one owner of a profile's stored session and of its lock (as GitHub
/// CLI's AuthConfig owns its hosts' tokens). Commands ask it for named operations: read the
/// session, get a fresh one, replace it after a sign-in, sign in or reuse one, end or remove it.
/// They never reach the keyring or the lock themselves.
///
/// Everything that stores or removes a session does it through a `LockedProfile`, which only
/// `locked(_:)` hands out while it holds the profile's lock: taking the lock twice, or writing
/// without it, cannot be written.
package struct ProfileSession {
    package let context: CommandContext
    package let settings: Settings

    package var profile: String { settings.profile }
    /// Everything kept for the profile (the session is this layer's; the rest its flows').
    package var kept: ProfileStore { context.kept(profile) }

    // MARK: the lock

    /// Runs `body` with the profile locked (waiting for another process's refresh or sign-in).
    package func locked<T>(_ body: (LockedProfile) throws -> T) throws -> T {
        try kept.lockedSession(body)
    }

    // MARK: reading

    /// The stored session, if any. Throws `SessionError.unreadable`, or the keyring's error.
    package func stored() throws -> StoredSession? {
        try kept.session()
    }

    /// The stored session; `SessionError.notSignedIn` without one. Makes no request.
    package func signedIn() throws -> StoredSession {
        guard let session = try stored() else {
            let pinnedToKernel = kept.source.isRecorded(profile) && (try? kept.storeKind) == .kernelKeyring
            throw SessionError.notSignedIn(profile: profile, keptIn: pinnedToKernel ? StoreKind.kernelKeyring.name : nil)
        }
        return session
    }

    /// What the store holds for `profile` (any profile: `status` lists them all).
    package func item(of profile: String) throws -> StoredItem {
        do {
            return try context.kept(profile).session().map(StoredItem.session) ?? .none
        } catch SessionError.unreadable {
            return .unreadable
        }
    }

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
        throw SessionError.otherClient(profile: profile, stored: (session.userPoolId, session.clientId),
                                       configured: (settings.userPoolId ?? session.userPoolId, settings.clientId ?? session.clientId))
    }

    /// The app client with its secret: AUTHCTL_CLIENT_SECRET, else the keyring item that
    /// `authctl configure` wrote. `storeRequired: false` tolerates a missing keyring.
    package func appClient(_ client: ClientSettings, storeRequired: Bool = true) throws -> AppClient {
        AppClient(userPoolId: client.userPoolId, clientId: client.clientId,
                  clientSecret: try clientSecret(clientId: client.clientId, storeRequired: storeRequired))
    }

    /// The app client's secret, if it has one: AUTHCTL_CLIENT_SECRET, else the keyring's item.
    package func clientSecret(clientId: String, storeRequired: Bool = true) throws -> String? {
        if let secret = settings.clientSecret { return secret }
        do {
            return try kept.clientSecret(clientId: clientId)
        } catch is SecureStoreError where !storeRequired {
            return nil
        }
    }

    /// `configure --client-secret-stdin`: keeps the secret of the configured app client.
    package func keepClientSecret(_ secret: String) throws {
        try kept.keepClientSecret(secret, userPoolId: settings.userPoolId ?? "", clientId: settings.clientId ?? "")
    }

    /// Removes the profile's kept client secret (it belonged to another app client).
    @discardableResult
    package func forgetClientSecret() throws -> Bool {
        try kept.forgetClientSecret()
    }

    // MARK: a fresh session

    /// The stored session, refreshed first when its access token expires within `minValidity`
    /// seconds. Throws `SessionError.notSignedIn` or `.ended` (after removing the dead session).
    package func freshSession(minValidity: Double = 60) throws -> (session: StoredSession, service: CognitoService) {
        let stored = try signedIn()
        try checkConfiguredClient(stored)
        let service = try context.service(settings, client: try clientSettings(for: stored))
        guard stored.expiresWithin(minValidity, now: context.now()) else {
            return (stored, service)
        }
        return (try refresh(replacing: stored, minValidity: minValidity, service: service), service)
    }

    /// Runs calls that use the session's access token, with a fresh session (see `freshSession`).
    /// An access token the service refuses as expired (this machine's clock is behind, say) is
    /// refreshed once and the calls run again (refused as expired once more: an error, the session
    /// kept); a token refused otherwise (revoked, user deleted) ends the session here (it is
    /// removed). Any other failure is thrown as it is.
    package func withFreshSession<T>(minValidity: Double = 60,
                             _ body: (_ session: StoredSession, _ service: CognitoService) throws -> T) throws -> T {
        var (session, service) = try freshSession(minValidity: minValidity)
        var refreshedOnce = false
        while true {
            do {
                return try body(session, service)
            } catch let error as CognitoError where error.refusal == .accessTokenExpired {
                // A token just issued is not expired: the clocks disagree, the session is fine.
                guard !refreshedOnce else { throw SessionError.clockSkew(serviceMessage: error.message) }
                refreshedOnce = true
                session = try refresh(replacing: session, minValidity: nil, service: service)
            } catch let error as CognitoError where error.endsSession {
                throw end(session, reason: "Cognito refused the access token: \(error.message)")
            }
        }
    }

    /// Refreshes `stored` under the profile's lock and stores the result. Another process may have
    /// refreshed (or signed in) while this one waited for the lock: its tokens are as fresh as the
    /// service gives, even when --min-valid asks for more than their lifetime, so they are used
    /// rather than refreshed (and rotated) once more. `minValidity: nil` refreshes whatever the
    /// expiry says (the service refused the access token as expired).
    private func refresh(replacing stored: StoredSession, minValidity: Double?, service: CognitoService) throws -> StoredSession {
        try locked { held in
            guard var current = try held.load() else { throw SessionError.notSignedIn(profile: profile) }
            let stillDue = minValidity.map { current.expiresWithin($0, now: context.now()) } ?? true
            guard stillDue, current.accessToken == stored.accessToken else {
                try checkConfiguredClient(current)
                return current
            }
            let client = try clientSettings(for: current)
            // From the send until the new refresh token is stored, Ctrl-C, SIGTERM and SIGHUP wait: with
            // rotation the old one is used up once the service answers, and losing the answer ends the session.
            ProcessSafety.deferTermination()
            defer { ProcessSafety.releaseTermination() }
            let tokens: AuthenticationResult
            if current.domain != nil {
                tokens = try refreshAtManagedLogin(current, client: client, in: held)
            } else {
                (tokens, current.issuingRegion) = try refreshWithFailover(current, client: client, service: service, in: held)
            }
            try IssuedTokens.check(accessToken: tokens.accessToken, idToken: tokens.idToken, issuers: client.acceptedIssuers,
                                   clientId: client.clientId, previous: current.holder)
            try current.apply(refreshed: tokens, now: context.now())
            do {
                try held.save(current)
            } catch let error as SecureStoreError {
                // The service has answered (and, with rotation, replaced the refresh token): use the
                // new tokens for this call rather than waste them, and say the store is behind.
                context.console.message(Messages.refreshedNotStored(error.message))
            }
            return current
        }
    }

    /// `refreshWithCognito` at the primary, and once at the replica when the primary did not
    /// answer (`Failover`); the region that issued the tokens (nil: the primary).
    private func refreshWithFailover(_ current: StoredSession, client: ClientSettings, service: CognitoService,
                                     in held: LockedProfile) throws -> (AuthenticationResult, String?) {
        try failingOver("refreshing", client: client, primary: service) { service, at, replicaRegion in
            (try refreshWithCognito(current, client: at, service: service, in: held), replicaRegion)
        }
    }

    /// A password sign-in's refresh: GetTokensFromRefreshToken (InitiateAuth REFRESH_TOKEN_AUTH
    /// where it is missing), with the remembered device's key.
    private func refreshWithCognito(_ current: StoredSession, client: ClientSettings, service: CognitoService,
                                    in held: LockedProfile) throws -> AuthenticationResult {
        let authenticator = Authenticator(service: service, client: try appClient(client), now: context.now)
        let devices = RememberedDevices(context: context, profile: profile)
        let device = devices.device(userPoolId: current.userPoolId, username: current.username)
        do {
            let refreshed = try authenticator.refresh(refreshToken: current.refreshToken, username: current.username,
                                                      device: device?.deviceKey)
            if let device, refreshed.deviceRefused { devices.discard(device, during: "refresh") }
            return refreshed.tokens
        } catch let error as CognitoError where error.refusal == .secretHashRejected {
            // The app client's secret is missing or wrong here: a configuration problem, and
            // the session (whose refresh token is fine) is kept.
            throw SessionError.clientSecretRefused(serviceMessage: error.message)
        } catch let error as CognitoError where error.endsSession {
            throw end(current, reason: "the refresh token was refused: \(error.message)", in: held)
        }
    }

    /// A browser session's refresh: `grant_type=refresh_token` at its managed-login domain. A
    /// refused grant ends the session; a misconfigured client keeps it.
    private func refreshAtManagedLogin(_ current: StoredSession, client: ClientSettings,
                                       in held: LockedProfile) throws -> AuthenticationResult {
        let domain = ManagedLoginDomain(current.domain ?? "")
        let endpoint = TokenEndpoint(domain: domain, transport: try context.transport(settings), client: try appClient(client))
        do {
            return try endpoint.refresh(refreshToken: current.refreshToken).authenticationResult
        } catch let error as OAuthError where error.code == .invalidGrant {
            throw end(current, reason: "the managed login refused the refresh token: \(OutsideText(error.description))", in: held)
        } catch let error as OAuthError {
            throw Failover.managedLoginFailure(error, domain: domain.base, settings: settings)
        }
    }

    /// Revokes a session's refresh token where it came from: the managed login's /oauth2/revoke
    /// for a browser session, RevokeToken for a password one.
    /// `appClient`: the one a sign-in just used (its secret not read from the store again).
    package func revoke(_ session: StoredSession, appClient known: AppClient? = nil) throws {
        let client = try clientSettings(for: session)
        if let domain = session.domain {
            let endpoint = TokenEndpoint(domain: ManagedLoginDomain(domain), transport: try context.transport(settings),
                                         client: try known ?? appClient(client))
            do {
                try endpoint.revoke(refreshToken: session.refreshToken)
            } catch let error as OAuthError {
                throw Failover.managedLoginFailure(error, domain: domain, settings: settings)
            }
        } else {
            let app = try known ?? appClient(client)
            try failingOver("revoking the refresh token", client: client) { service, _, _ in
                try service.revokeToken(refreshToken: session.refreshToken, client: app)
            }
        }
    }

    /// `body` with the primary's service (`primary`, else a new one), and once more with the
    /// replica's when the primary did not answer (`Failover.isOutage`), said on stderr: for the
    /// calls a session makes that do not change the directory (refresh, RevokeToken,
    /// GlobalSignOut), so a session either region issued keeps working while the other is out.
    /// `body` is given the service, the client settings it is for, and the replica's region when
    /// it runs there. A refusal is thrown as it is.
    package func failingOver<T>(_ what: String, client: ClientSettings, primary: CognitoService? = nil,
                        _ body: (CognitoService, ClientSettings, _ replicaRegion: String?) throws -> T) throws -> T {
        do {
            return try body(try primary ?? context.service(settings, client: client), client, nil)
        } catch let error as CognitoError where Failover.isOutage(error) {
            guard let replica = client.replica, let atReplica = client.atReplica() else { throw error }
            context.console.message(Failover.notice(what, primary: client, replica: replica, because: error.message))
            return try body(try context.service(settings, client: atReplica), atReplica, replica.region)
        }
    }

    // MARK: signing in

    /// Stores a session just signed in, under the lock, so a refresh that was under way cannot
    /// overwrite it with the session it replaced. Returns the session it replaced, if readable.
    @discardableResult
    package func replace(with session: StoredSession) throws -> StoredSession? {
        try locked { held in
            let replaced = try? held.load()
            try held.save(session)
            return replaced ?? nil
        }
    }

    /// Stores a session just signed in (as `replace(with:)`), then revokes the refresh token of the
    /// session it replaced: signing in again must not leave that one usable on the service for weeks
    /// while nothing here remembers it (best effort, same pool, client and endpoint only; a failure
    /// is a warning).
    package func store(signedIn session: StoredSession) throws {
        let replaced = try replace(with: session)
        if let replaced, let notice = Messages.anotherUser(replacing: replaced, with: session) { context.console.message(notice) }
        guard let replaced, replaced.refreshToken != session.refreshToken,
              replaced.userPoolId == session.userPoolId, replaced.clientId == session.clientId,
              ClientSettings.sameEndpoint(replaced.endpoint, session.endpoint) else { return }
        do {
            try revoke(replaced)
        } catch {
            context.console.message(Messages.replacedNotRevoked(AuthctlError.from(error).message))
        }
    }

    /// A session just signed in that the store failed to keep (it answered the check before the
    /// sign-in, then failed: a keyring locked meanwhile, a file changed under it): its refresh
    /// token is revoked, so nothing usable is left at the service that nothing here remembers,
    /// and the error says exactly that, with the store's exit code.
    func notKept(_ session: StoredSession, appClient: AppClient?, because error: Error) -> Error {
        let failure = AuthctlError.from(error)
        let revoked: String
        do {
            try revoke(session, appClient: appClient)
            revoked = "its refresh token was revoked at Cognito"
        } catch {
            revoked = "its refresh token could not be revoked (\(AuthctlError.from(error).message)); " +
                "it stays usable at Cognito until it expires"
        }
        return AuthctlError(failure.code, Messages.signedInNotKept(as: session.username, revoked: revoked,
                                                                   reason: failure.message))
    }

    /// How `token --password-stdin` gets its session: the stored one when it is fresh and of the
    /// user asked for; else a sign-in (`prepare` asks for what it needs, then `signIn` runs), under
    /// the profile's lock so that of many jobs started together on no session one signs in and the
    /// others take its session. Where no Secret Service answers, the sign-in keeps nothing.
    package func signInOrReuse(as username: String?, minValidity: Double,
                       prepare: (_ storeAvailable: Bool) throws -> PreparedSignIn) throws -> ObtainedSession {
        var storeFailure: SecureStoreError?
        do {
            let (session, service) = try freshSession(minValidity: minValidity)
            // A session of another user than the one asked for is no valid session for this call.
            if username.map({ session.isSignedIn(as: $0) }) ?? true {
                return ObtainedSession(session: session, service: service, notKept: nil)
            }
        } catch let error as SecureStoreError {
            storeFailure = error
        } catch let error as SessionError where error.callsForSignIn {
            // Not signed in, the session ended, or it is another client's: sign in below.
        }

        if storeFailure == nil {
            // A read finds no file store file without asking for its passphrase: open what a
            // write needs before the service is asked.
            do {
                try kept.checkCanKeep()
            } catch let error as SecureStoreError {
                storeFailure = error
            }
        }
        let prepared = try prepare(storeFailure == nil)
        if storeFailure == nil {
            var signInStarted = false
            do {
                let obtained: ObtainedSession = try locked { held in
                    // An unreadable item is no session: the sign-in below replaces it.
                    let stored: StoredSession?
                    do { stored = try held.load() } catch SessionError.unreadable { stored = nil }
                    if let current = stored, current.isSignedIn(as: prepared.username),
                       !current.expiresWithin(minValidity, now: context.now()), (try? checkConfiguredClient(current)) != nil {
                        return ObtainedSession(session: current, service: nil, notKept: nil)
                    }
                    signInStarted = true
                    let fresh = try prepared.signIn()
                    do {
                        try held.save(fresh)
                        return ObtainedSession(session: fresh, service: nil, notKept: nil)
                    } catch let error as SecureStoreError {
                        return ObtainedSession(session: fresh, service: nil, notKept: error)
                    } catch {
                        // A store the person chose failed after the answer: nothing is handed out.
                        throw notKept(fresh, appClient: prepared.appClient, because: error)
                    }
                }
                return obtained
            } catch let error as SecureStoreError where !signInStarted {
                // The store failed before any sign-in (reading it): sign in without it below. A
                // failure during the sign-in is thrown: another try would send another code.
                storeFailure = error
            }
        }
        return ObtainedSession(session: try prepared.signIn(), service: nil, notKept: storeFailure)
    }

    // MARK: ending

    /// Removes `session`, which the service no longer accepts, and returns the error that says so
    /// (or that it could not be removed, with the keyring's error and exit code). Only while the
    /// store still holds that session: one another process signed in or refreshed meanwhile is
    /// never removed in its place.
    package func end(_ session: StoredSession, reason: String) -> Error {
        do {
            return try locked { held in end(session, reason: reason, in: held) }
        } catch {
            return notRemoved(error, reason: reason)
        }
    }

    /// `end` while the caller holds the lock.
    package func end(_ session: StoredSession, reason: String, in held: LockedProfile) -> Error {
        do {
            guard try held.remove(ifStill: session) else {
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
            try locked { held in _ = try held.remove() }
            return nil
        } catch {
            return error
        }
    }

    /// After DeleteUser: removes what the profile keeps of the deleted account, under the lock.
    package func removeDeletedAccount(_ session: StoredSession) throws -> [KeptItem.Kind] {
        try locked { held in try held.removeDeletedAccount(userPoolId: session.userPoolId, username: session.username) }
    }

    /// `signout` on this device, under the lock from reading to removing (a parallel refresh
    /// cannot store the session again after it is deleted). `revoke` revokes the stored session's
    /// refresh token (it reports, rather than throws, its failure).
    package func signOutLocally(revoke: (StoredSession) -> Bool) throws -> LocalSignOut {
        try locked { held in
            let session: StoredSession
            do {
                guard let loaded = try held.load() else { return .notSignedIn }
                session = loaded
            } catch SessionError.unreadable {
                // Nothing in it can be revoked, but an unusable item must not stay.
                return .unreadable(removal: Self.attempt { _ = try held.remove() })
            }
            let revoked = revoke(session)
            return .signedOut(session, revoked: revoked, removal: Self.attempt { _ = try held.remove() })
        }
    }

    private static func attempt(_ body: () throws -> Void) -> Error? {
        do { try body(); return nil } catch { return error }
    }

    package init(context: CommandContext, settings: Settings) {
        self.context = context
        self.settings = settings
    }
}

extension ProfileSession {
    /// `freshSession`, and also a refresh when the id token is the one asked for and expires
    /// within `minValidity` (an app client may give id tokens a shorter life than access tokens).
    package func freshSession(minValidity: Double, for type: TokenType) throws -> StoredSession {
        var (session, _) = try freshSession(minValidity: minValidity)
        guard type == .id, let idExpiry = (try? JWTClaims(token: session.idToken))?.expiresAt,
              idExpiry.timeIntervalSince(context.now()) <= minValidity else { return session }
        // Asking for more validity than the access token has left makes the refresh due.
        (session, _) = try freshSession(minValidity: session.accessTokenExpiresAt.timeIntervalSince(context.now()) + 1)
        return session
    }
}

/// What the store holds for a profile.
package enum StoredItem {
    case none
    case session(StoredSession)
    /// An item that cannot be decoded (damaged, or written by another version).
    case unreadable
}

/// A sign-in ready to run: the user it is for, and the call that signs in.
package struct PreparedSignIn {
    package var username: String
    /// The app client the sign-in uses (to revoke its answer without reading the store again).
    package var appClient: AppClient?
    package var signIn: () throws -> StoredSession
}

/// The session `signInOrReuse` found or made. `service` is set when it came from the store;
/// `notKept` is the keyring's failure when a new session could not be stored.
package struct ObtainedSession {
    package var session: StoredSession
    package var service: CognitoService?
    package var notKept: SecureStoreError?
}

/// How `signOutLocally` went.
package enum LocalSignOut {
    case notSignedIn
    /// The item could not be decoded; `removal` is why it could not be removed, if it could not.
    case unreadable(removal: Error?)
    /// `revoked`: the refresh token was revoked; `removal` as above.
    case signedOut(StoredSession, revoked: Bool, removal: Error?)
}

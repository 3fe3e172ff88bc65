import CognitoClient
import Foundation
import SecureStore
#if canImport(Glibc)
import Glibc
#endif

/// The steps commands share: which app client to talk to, its secret, and a session whose
/// access token is fresh (refreshed under a lock, so parallel processes refresh once).
struct SessionKeeper {
    let context: CommandContext
    let settings: Settings

    var repository: SessionRepository { SessionRepository(store: context.store) }

    /// The session's own pool and client (its refresh token belongs to them); the endpoint and
    /// region configured now, else the ones it was signed in with. Another endpoint than the
    /// session's is refused (exit 78): every request made with a session's tokens is made here.
    func clientSettings(for session: StoredSession) throws -> ClientSettings {
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
    func checkConfiguredClient(_ session: StoredSession) throws {
        let poolDiffers = settings.userPoolId.map { $0 != session.userPoolId } ?? false
        let clientDiffers = settings.clientId.map { $0 != session.clientId } ?? false
        guard poolDiffers || clientDiffers else { return }
        throw AuthctlError(.notAuthorized, """
            the session of profile \(settings.profile) was signed in with client \(session.clientId) of \(session.userPoolId), \
            but client \(settings.clientId ?? session.clientId) of \(settings.userPoolId ?? session.userPoolId) is configured; \
            run authctl signin to sign in with it (or use another --profile)
            """)
    }

    /// The app client with its secret: AUTHCTL_CLIENT_SECRET, else the keyring item that
    /// `authctl configure` wrote. `storeRequired: false` tolerates a missing keyring.
    func appClient(_ client: ClientSettings, storeRequired: Bool = true) throws -> AppClient {
        if let secret = settings.clientSecret {
            return AppClient(userPoolId: client.userPoolId, clientId: client.clientId, clientSecret: secret)
        }
        do {
            let secret = try repository.clientSecret(profile: settings.profile, clientId: client.clientId)
            return AppClient(userPoolId: client.userPoolId, clientId: client.clientId, clientSecret: secret)
        } catch let error as SecureStoreError where !storeRequired {
            _ = error
            return AppClient(userPoolId: client.userPoolId, clientId: client.clientId)
        }
    }

    /// The stored session, refreshed first when its access token expires within `minValidity`
    /// seconds. Throws "not signed in" or "session ended" (after removing the dead session).
    func freshSession(minValidity: Double = 60) throws -> (session: StoredSession, service: CognitoService) {
        guard let stored = try repository.load(profile: settings.profile) else {
            throw AuthctlError.notSignedIn(profile: settings.profile)
        }
        try checkConfiguredClient(stored)
        let service = try context.service(settings, client: try clientSettings(for: stored))
        guard stored.expiresWithin(minValidity, now: context.now()) else {
            return (stored, service)
        }
        return (try refresh(replacing: stored, minValidity: minValidity, service: service), service)
    }

    /// Refreshes `stored` under the profile's lock and stores the result. Another process may have
    /// refreshed (or signed in) while this one waited for the lock: its tokens are as fresh as the
    /// service gives, even when --min-valid asks for more than their lifetime, so they are used
    /// rather than refreshed (and rotated) once more. `minValidity: nil` refreshes whatever the
    /// expiry says (the service refused the access token as expired).
    private func refresh(replacing stored: StoredSession, minValidity: Double?, service: CognitoService) throws -> StoredSession {
        try RefreshLock.withLock(profile: settings.profile, environment: context.environment) {
            guard var current = try repository.load(profile: settings.profile) else {
                throw AuthctlError.notSignedIn(profile: settings.profile)
            }
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
                tokens = try refreshAtTokenEndpoint(current, client: client)
            } else {
                let authenticator = Authenticator(service: service, client: try appClient(client), now: context.now)
                let devices = RememberedDevices(context: context)
                let device = devices.device(userPoolId: current.userPoolId, username: current.username)
                do {
                    let refreshed = try authenticator.refresh(refreshToken: current.refreshToken, username: current.username,
                                                              device: device?.deviceKey)
                    if let device, refreshed.deviceRefused { devices.discard(device, during: "refresh") }
                    tokens = refreshed.tokens
                } catch let error as CognitoError where error.refusal == .secretHashRejected {
                    // The app client's secret is missing or wrong here: a configuration problem, and
                    // the session (whose refresh token is fine) is kept.
                    throw AuthctlError(.configuration, """
                        Cognito refused the app client's secret (\(error.message)): set AUTHCTL_CLIENT_SECRET, or keep it with \
                        `authctl configure --client-secret-stdin`
                        """)
                } catch let error as CognitoError where error.isNotAuthorized || error.refusal == .userNotFound {
                    throw endSession(current, reason: "the refresh token was refused: \(error.message)", lockHeld: true)
                } catch {
                    throw AuthctlError.from(error, endpoint: client.endpoint)
                }
            }
            try current.apply(refreshed: tokens, now: context.now())
            do {
                try repository.save(current)
            } catch let error as SecureStoreError {
                // The service has answered (and, with rotation, replaced the refresh token): use the
                // new tokens for this call rather than waste them, and say the store is behind.
                context.console.message("authctl: warning: the refreshed session could not be stored (\(AuthctlError.from(error).message)); the next command may have to sign in again.")
            }
            return current
        }
    }

    /// Stores a new session under the refresh lock, so a refresh that was under way cannot
    /// overwrite it with the session it replaced. Returns the session it replaced, if readable.
    @discardableResult
    func save(_ session: StoredSession) throws -> StoredSession? {
        try RefreshLock.withLock(profile: settings.profile, environment: context.environment) {
            let replaced = try? repository.load(profile: settings.profile)
            ProcessSafety.deferTermination()
            defer { ProcessSafety.releaseTermination() }
            try repository.save(session)
            return replaced ?? nil
        }
    }

    /// Runs calls that use the session's access token, with a fresh session (see `freshSession`).
    /// An access token the service refuses as expired (this machine's clock is behind, say) is
    /// refreshed once and the calls run again (refused as expired once more: an error, the session
    /// kept); a token refused otherwise (revoked, user deleted) ends the session here (it is removed). Any other failure becomes the usual message and code.
    func withFreshSession<T>(minValidity: Double = 60,
                             _ body: (_ session: StoredSession, _ service: CognitoService) throws -> T) throws -> T {
        var (session, service) = try freshSession(minValidity: minValidity)
        var refreshedOnce = false
        while true {
            do {
                return try body(session, service)
            } catch let error as CognitoError where error.refusal == .accessTokenExpired {
                guard !refreshedOnce else {
                    // A token just issued is not expired: the clocks disagree, the session is fine.
                    throw AuthctlError(.notAuthorized, """
                        Cognito refuses even a freshly refreshed access token as expired (\(error.message)); check this \
                        machine's clock. The session was kept.
                        """)
                }
                refreshedOnce = true
                session = try refresh(replacing: session, minValidity: nil, service: service)
            } catch let error as CognitoError where error.isNotAuthorized || error.refusal == .userNotFound {
                throw endSession(session, reason: "Cognito refused the access token: \(error.message)")
            } catch let error as CognitoError {
                throw AuthctlError.from(error, endpoint: service.endpoint)
            }
        }
    }

    /// Removes `session`, which the service no longer accepts, and says so; or says that it could
    /// not be removed (the keyring's error and exit code: the dead item is still there). Under the
    /// profile's lock (`lockHeld`: the caller has it), and only while the store still holds that
    /// session: one another process signed in or refreshed meanwhile is never removed in its place.
    func endSession(_ session: StoredSession, reason: String, lockHeld: Bool = false) -> AuthctlError {
        let removeIfCurrent = {
            guard let current = (try? repository.load(profile: settings.profile)) ?? nil,
                  current.accessToken == session.accessToken else { return false }
            return try repository.delete(profile: settings.profile)
        }
        do {
            let removed = lockHeld ? try removeIfCurrent()
                : try RefreshLock.withLock(profile: settings.profile, environment: context.environment, removeIfCurrent)
            guard removed else {
                return AuthctlError(.notAuthorized, """
                    Cognito refused the session this command used (\(reason)); profile \(settings.profile) now holds a \
                    newer session, which was kept: run the command again
                    """)
            }
        } catch {
            let failure = AuthctlError.from(error)
            return AuthctlError(failure.code, """
                The session for profile \(settings.profile) has ended (\(reason)), but it could not be removed from this \
                device: \(failure.message)
                """)
        }
        return AuthctlError.sessionEnded(profile: settings.profile, reason: reason)
    }
}

/// An exclusive `flock` per profile in `$XDG_RUNTIME_DIR/authctl/` (else the user's cache
/// directory), held while a session is refreshed and stored. Only in a PrivateDirectory.
enum RefreshLock {
    /// Where the lock may be, in order of preference.
    static func directories(environment: [String: String]) -> [String] {
        var candidates: [String] = []
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            candidates.append(runtime + "/authctl")
        }
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") {
            candidates.append(cache + "/authctl")
        } else {
            candidates.append((environment["HOME"] ?? NSHomeDirectory()) + "/.cache/authctl")
        }
        return candidates
    }

    /// How long to wait for another process's refresh or sign-in (its own requests are bounded by
    /// their timeouts, but a sign-in may be waiting for a person to type a code).
    static let maximumWait: Double = 120

    static func withLock<T>(profile: String, environment: [String: String], waitingAtMost maximumWait: Double = maximumWait,
                            _ body: () throws -> T) throws -> T {
        let directory = try PrivateDirectory.first(of: directories(environment: environment), for: "the refresh lock")
        defer { directory.close() }
        let safeName = profile.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
        let name = String(safeName) + ".lock"
        let path = directory.path + "/" + name
        let fd = try directory.openFile(name, flags: O_RDWR | O_CREAT)
        defer { close(fd) }
        let deadline = Date().addingTimeInterval(maximumWait)
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw AuthctlError(.unexpected, "cannot lock \(path): \(String(cString: strerror(errno)))")
            }
            guard Date() < deadline else {
                throw AuthctlError(.throttled, """
                    another authctl process has been refreshing or signing in to profile \(profile) for over \
                    \(Int(maximumWait)) s (it holds \(path)); try again when it has finished
                    """)
            }
            usleep(50_000)
        }
        defer { flock(fd, LOCK_UN) }
        return try body()
    }
}

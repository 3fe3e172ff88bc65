import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The session layer's fresh session: refreshed when due (at a password session's user pool,
/// with failover, or at a browser session's managed login), and calls run under a `SessionPolicy`.
extension ProfileSession {
    // MARK: a fresh session

    /// The stored session, refreshed first when its access token expires within `minValidity`
    /// seconds. Throws `SessionError.notSignedIn` or `.ended` (after removing the dead session).
    package func freshSession(minValidity: Double = 60) throws -> (session: StoredSession, service: CognitoService) {
        let stored = try signedIn()
        try checkConfiguredClient(stored)
        let service = try context.service(client: try clientSettings(for: stored))
        guard stored.expiresWithin(minValidity, now: context.now()) else {
            return (stored, service)
        }
        return (try refresh(replacing: stored, minValidity: minValidity, service: service), service)
    }

    /// Runs calls that use the session's access token, with a fresh session (see `freshSession`),
    /// under the standard policy: an access token the service refuses as expired (this machine's
    /// clock is behind, say) is refreshed once and the calls run again (refused as expired once
    /// more: an error, the session kept); a token refused otherwise (revoked, user deleted) ends
    /// the session here (it is removed). Any other failure is thrown as it is.
    package func withFreshSession<T>(
        minValidity: Double = 60,
        _ body: (_ session: StoredSession, _ service: CognitoService) throws -> T
    ) throws -> T {
        try withFreshSession(minValidity: minValidity, policy: .standard, body).get()
    }

    /// Runs calls that use the session's access token, with a fresh session, under `policy`: what
    /// an access token refused as expired, a refusal that ends the session and any other refusal
    /// do. The one place a command's calls meet the session's refusals.
    package func withFreshSession<T>(
        minValidity: Double = 60, policy: SessionPolicy,
        _ body: (_ session: StoredSession, _ service: CognitoService) throws -> T
    )
        throws -> SessionOutcome<T>
    {
        var (session, service) = try freshSession(minValidity: minValidity)
        var refreshedOnce = false
        while true {
            do {
                return .completed(try body(session, service))
            } catch let error as CognitoError where policy.refreshesOnExpiry && error.refusal == .accessTokenExpired {
                // A token just issued is not expired: the clocks disagree, the session is fine.
                guard !refreshedOnce else { throw SessionError.clockSkew(serviceMessage: error.message) }
                refreshedOnce = true
                session = try refresh(replacing: session, minValidity: nil, service: service)
            } catch let error as CognitoError where policy.endsSession(error) {
                switch policy.onEndingRefusal {
                case .endSession:
                    throw end(session, reason: "Cognito refused the access token: \(error.message)")
                case .handBack:
                    return .refused(error, session: session)
                }
            } catch let error as CognitoError {
                throw policy.otherRefusal(error, service)
            }
        }
    }

    /// Refreshes `stored` under the profile's lock and stores the result. Another process may have
    /// refreshed (or signed in) while this one waited for the lock: its tokens are as fresh as the
    /// service gives, even when --min-valid asks for more than their lifetime, so they are used
    /// rather than refreshed (and rotated) once more. `minValidity: nil` refreshes whatever the
    /// expiry says (the service refused the access token as expired).
    func refresh(replacing stored: StoredSession, minValidity: Double?, service: CognitoService) throws -> StoredSession
    {
        try withLockedSession { locked in
            guard var current = try locked.load() else { throw SessionError.notSignedIn(profile: profile) }
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
                tokens = try refreshAtManagedLogin(current, client: client, in: locked)
            } else {
                (tokens, current.issuingRegion) = try refreshWithFailover(
                    current, client: client, service: service, in: locked)
            }
            try IssuedTokens.check(
                accessToken: tokens.accessToken, idToken: tokens.idToken, issuers: client.acceptedIssuers,
                clientId: client.clientId, previous: current.holder)
            try current.apply(refreshed: tokens, now: context.now())
            do {
                try locked.save(current)
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
    func refreshWithFailover(
        _ current: StoredSession, client: ClientSettings, service: CognitoService,
        in locked: LockedSession
    ) throws -> (AuthenticationResult, String?) {
        try failingOver("refreshing", client: client, primary: service) { service, at, replicaRegion in
            (try refreshWithCognito(current, client: at, service: service, in: locked), replicaRegion)
        }
    }

    /// A password sign-in's refresh: GetTokensFromRefreshToken (InitiateAuth REFRESH_TOKEN_AUTH
    /// where it is missing), with the remembered device's key.
    func refreshWithCognito(
        _ current: StoredSession, client: ClientSettings, service: CognitoService,
        in locked: LockedSession
    ) throws -> AuthenticationResult {
        let authenticator = Authenticator(service: service, client: try appClient(client), now: context.now)
        let devices = RememberedDevices(context: context, profile: profile)
        let device = devices.device(userPoolId: current.userPoolId, username: current.username)
        do {
            let refreshed = try authenticator.refresh(
                refreshToken: current.refreshToken, username: current.username,
                device: device?.deviceKey)
            if let device, refreshed.deviceRefused { devices.discard(device, during: "refresh") }
            return refreshed.tokens
        } catch let error as CognitoError where error.refusal == .secretHashRejected {
            // The app client's secret is missing or wrong here: a configuration problem, and
            // the session (whose refresh token is fine) is kept.
            throw SessionError.clientSecretRefused(serviceMessage: error.message)
        } catch let error as CognitoError where error.endsSession {
            throw end(current, reason: "the refresh token was refused: \(error.message)", in: locked)
        }
    }

    /// A browser session's refresh: `grant_type=refresh_token` at its managed-login domain. A
    /// refused grant ends the session; a misconfigured client keeps it.
    func refreshAtManagedLogin(
        _ current: StoredSession, client: ClientSettings,
        in locked: LockedSession
    ) throws -> AuthenticationResult {
        let domain = ManagedLoginDomain(current.domain ?? "")
        let endpoint = TokenEndpoint(
            domain: domain, transport: try context.transport(), client: try appClient(client))
        do {
            return try endpoint.refresh(refreshToken: current.refreshToken).authenticationResult
        } catch let error as OAuthError where error.code == .invalidGrant {
            throw end(
                current, reason: "the managed login refused the refresh token: \(UntrustedText(error.description))",
                in: locked)
        } catch let error as OAuthError {
            throw Failover.managedLoginFailure(error, domain: domain.base, settings: settings)
        }
    }

    /// `body` with the primary's service (`primary`, else a new one), and once more with the
    /// replica's when the primary did not answer (`Failover.isOutage`), said on stderr: for the
    /// calls a session makes that do not change the directory (refresh, RevokeToken,
    /// GlobalSignOut), so a session either region issued keeps working while the other is out.
    /// `body` is given the service, the client settings it is for, and the replica's region when
    /// it runs there. A refusal is thrown as it is.
    package func failingOver<T>(
        _ what: StaticString, client: ClientSettings, primary: CognitoService? = nil,
        _ body: (CognitoService, ClientSettings, _ replicaRegion: String?) throws -> T
    ) throws -> T {
        do {
            return try body(try primary ?? context.service(client: client), client, nil)
        } catch let error as CognitoError where Failover.isOutage(error) {
            guard let replica = client.replica, let atReplica = client.atReplica() else { throw error }
            context.console.message(
                Failover.notice(what.description, primary: client, replica: replica, because: error.message))
            context.trace?.record(.failover(what, replicaRegion: TracedText(outside: replica.region)))
            return try body(try context.service(client: atReplica), atReplica, replica.region)
        }
    }
}

extension ProfileSession {
    /// `freshSession`, and also a refresh when the id token is the one asked for and expires
    /// within `minValidity` (an app client may give id tokens a shorter life than access tokens).
    package func freshSession(minValidity: Double, for type: TokenType) throws -> (
        session: StoredSession, service: CognitoService
    ) {
        let fresh = try freshSession(minValidity: minValidity)
        guard type == .id, idTokenExpiresWithin(fresh.session, minValidity) else { return fresh }
        // Asking for more validity than the access token has left makes the refresh due.
        return try freshSession(
            minValidity: fresh.session.accessTokenExpiresAt.timeIntervalSince(context.now()) + 1)
    }

    /// Whether `session`'s token of `type` expires within `minValidity` seconds (the access token
    /// always counts: it is the one refreshed).
    func expiresWithin(_ session: StoredSession, _ minValidity: Double, for type: TokenType) -> Bool {
        session.expiresWithin(minValidity, now: context.now())
            || (type == .id && idTokenExpiresWithin(session, minValidity))
    }

    private func idTokenExpiresWithin(_ session: StoredSession, _ minValidity: Double) -> Bool {
        guard let expiry = (try? JWTClaims(token: session.idToken))?.expiresAt else { return false }
        return expiry.timeIntervalSince(context.now()) <= minValidity
    }
}

import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Temporary AWS credentials for the signed-in user from an identity pool (the enhanced flow:
/// GetId, then GetCredentialsForIdentity with the session's id token as the login), cached in
/// the Secret Service per profile and identity pool until 5 minutes before they expire.
/// Parallel processes fetch once: the fetch runs under a per-profile lock of its own (taken
/// before the session's refresh lock, never after, so the two cannot deadlock) and re-reads the cache.
package struct IdentityPoolCredentials {
    /// The profile's session service: its settings, store and transport.
    package let session: ProfileSession
    private var context: CommandContext { session.context }
    private var settings: Settings { session.settings }
    package let pool: IdentityPoolSettings

    /// Credentials closer than this to their expiry are fetched anew (the AWS CLI does not cache
    /// `credential_process` output, so each call must get some that last through its work).
    package static let renewalMargin: Double = 300

    private var sessions: ProfileSession { session }
    private var store: ProfileStore { session.store }

    /// `minValidity`: cached ones with less left are fetched anew (`exec --serve` asks for more).
    package func credentials(minValidity: Double = renewalMargin) throws -> TemporaryAWSCredentials {
        // The cache serves only the session stored now: signed out (or in as someone else), nothing.
        guard let session = try sessions.stored() else {
            throw SessionError.notSignedIn(profile: settings.profile)
        }
        try sessions.checkConfiguredClient(session)
        if let entry = try usableEntry(for: session, minValidity) {
            context.trace?.record(.cache(.awsCredentials, hit: true))
            return entry.credentials
        }

        // A lock of its own (not the session's): the credentials cache is this type's, not the session layer's.
        return try store.locked(.awsCredentials) {
            // Another process may have fetched while this one waited.
            let current = try sessions.stored() ?? session
            let entry = try usableEntry(for: current, minValidity)
            context.trace?.record(.cache(.awsCredentials, hit: entry != nil))
            if let entry { return entry.credentials }
            return try fetch()
        }
    }

    private func usableEntry(for session: StoredSession, _ minValidity: Double) throws -> CachedAWSCredentials? {
        guard let entry = try store.awsCredentials(identityPoolId: pool.identityPoolId),
            entry.belongs(to: session, pool: pool),
            entry.credentials.validFor(minValidity, now: context.now())
        else { return nil }
        return entry
    }

    /// Under the lock: a fresh id token (refreshed first when needed, under the session's lock),
    /// the identity id (kept from an earlier fetch, else GetId), then the credentials.
    private func fetch() throws -> TemporaryAWSCredentials {
        let session = try sessions.freshToken(.id, minValidity: 60).session
        let identity = CognitoIdentityService(
            endpoint: pool.endpoint, transport: try context.transport(),
            retryPolicy: try context.retryPolicy)
        let logins = [try pool.loginsKey(userPoolId: session.userPoolId): session.idToken]
        let cached = (try? store.awsCredentials(identityPoolId: pool.identityPoolId)) ?? nil
        var identityId = cached.flatMap { $0.sameIdentity(session, pool: pool) ? $0.identityId : nil }

        let answer: IdentityCredentials
        do {
            do {
                let id = try identityId ?? identity.getId(identityPoolId: pool.identityPoolId, logins: logins)
                identityId = id
                answer = try identity.getCredentialsForIdentity(
                    identityId: id, logins: logins, customRoleArn: pool.roleArn,
                    now: context.now())
            } catch let error as CognitoIdentityError
                where error.reason == .notFound && cached?.identityId == identityId && identityId != nil
            {
                // The identity kept from an earlier fetch was deleted from the pool: ask for this login's own.
                let id = try identity.getId(identityPoolId: pool.identityPoolId, logins: logins)
                answer = try identity.getCredentialsForIdentity(
                    identityId: id, logins: logins, customRoleArn: pool.roleArn,
                    now: context.now())
            }
        } catch let error as CognitoIdentityError {
            throw Self.failure(error, pool: pool, userPoolId: session.userPoolId)
        }

        let entry = CachedAWSCredentials(
            profile: settings.profile, identityPoolId: pool.identityPoolId,
            userPoolId: session.userPoolId, sub: session.sub, roleArn: pool.roleArn,
            identityId: answer.identityId, credentials: answer.credentials,
            identityEndpoint: pool.endpoint)
        do {
            try store.keep(entry)
        } catch let error as SecureStoreError {
            // The credentials are good: hand them out, and say the next call will fetch again.
            context.console.message(
                "authctl: warning: the AWS credentials could not be cached (\(AuthctlError.from(error).message)); the next call fetches them again."
            )
        }
        return answer.credentials
    }

    /// What an identity-pool refusal means to the person, and its exit code.
    package static func failure(_ error: CognitoIdentityError, pool: IdentityPoolSettings, userPoolId: String)
        -> AuthctlError
    {
        let detail = error.description
        switch error.reason {
        case .loginRefused, .loginConflict:
            return AuthctlError(
                .notAuthorized,
                """
                identity pool \(pool.identityPoolId) refused the sign-in (\(detail)); its authentication providers must \
                include user pool \(userPoolId) and this app client
                """)
        case .notFound:
            return AuthctlError(
                .configuration,
                "Cognito Identity at \(pool.endpoint) does not know identity pool \(pool.identityPoolId) (\(detail))")
        case .noUsableRole:
            let role =
                pool.roleArn.map { "role \($0) for this user (is it one of the pool's role-mapping rules?)" }
                ?? "an authenticated role"
            return AuthctlError(.configuration, "identity pool \(pool.identityPoolId) cannot give \(role): \(detail)")
        case .invalidParameter:
            return AuthctlError(.configuration, "Cognito Identity refused the request: \(detail)")
        case .throttled:
            return AuthctlError(
                .throttled, "Too many requests to Cognito Identity; wait a little and try again (\(detail))")
        case .unreachable:
            return AuthctlError(.unavailable, "cannot reach Cognito Identity at \(pool.endpoint): \(detail)")
        case .serviceFailure, .externalService, .malformedAnswer:
            return AuthctlError(.unavailable, "Cognito Identity at \(pool.endpoint) failed: \(detail)")
        case .other:
            return AuthctlError(.unexpected, "Cognito Identity answered \(detail)")
        }
    }

    package init(session: ProfileSession, pool: IdentityPoolSettings) {
        self.session = session
        self.pool = pool
    }
}

extension IdentityPoolCredentials {
    /// What `exec --serve` holds: the session refreshed when either token has less than
    /// `minValidity` left, and credentials with more than twice that: cached ones only while
    /// nearer the start of their life than the end, so that the refresh planned from what is left
    /// (`ServeSchedule`, half the time left at most) comes early enough.
    package func served(minValidity: Double) throws -> ServedCredentials {
        let session = try sessions.freshSession(minValidity: minValidity, for: .id).session
        let aws = try credentials(minValidity: 2 * minValidity)
        return ServedCredentials(
            aws: aws, accessToken: session.accessToken, idToken: session.idToken,
            tokensExpireAt: session.accessTokenExpiresAt, fetchedAt: context.now())
    }
}

extension CachedAWSCredentials {
    /// The identity id is this user's in this pool, at the identity endpoint configured now.
    package func sameIdentity(_ session: StoredSession, pool: IdentityPoolSettings) -> Bool {
        identityPoolId == pool.identityPoolId && userPoolId == session.userPoolId && sub == session.sub && !sub.isEmpty
            && identityEndpoint.map { ClientSettings.sameEndpoint($0, pool.endpoint) } == true
    }

    /// The credentials are for this user, this pool and endpoint, and the role asked for (a cache
    /// is keyed by everything that makes its answer).
    package func belongs(to session: StoredSession, pool: IdentityPoolSettings) -> Bool {
        sameIdentity(session, pool: pool) && roleArn == pool.roleArn
    }
}

extension TemporaryAWSCredentials {
    /// The variables the AWS CLI and SDKs read (AWS_CREDENTIAL_EXPIRATION as aws-vault and the SDKs' tooling set it).
    package var environment: [(name: String, value: String)] {
        [
            ("AWS_ACCESS_KEY_ID", accessKeyId), ("AWS_SECRET_ACCESS_KEY", secretAccessKey),
            ("AWS_SESSION_TOKEN", sessionToken), ("AWS_CREDENTIAL_EXPIRATION", Format.iso8601(expiration)),
        ]
    }
}

import CognitoClient
import Foundation
import LocalFormats
import SecureStore

/// Temporary AWS credentials for the signed-in user from an identity pool (the enhanced flow:
/// GetId, then GetCredentialsForIdentity with the session's id token as the login), cached in
/// the Secret Service per profile and identity pool until 5 minutes before they expire.
/// Parallel processes fetch once: the fetch runs under a per-profile lock of its own (taken
/// before the session's refresh lock, never after, so the two cannot deadlock) and re-reads the cache.
struct IdentityPoolCredentials {
    let context: CommandContext
    let settings: Settings
    let pool: IdentityPoolSettings

    /// Credentials closer than this to their expiry are fetched anew (the AWS CLI does not cache
    /// `credential_process` output, so each call must get some that last through its work).
    static let renewalMargin: Double = 300

    private var sessions: ProfileSession { ProfileSession(context: context, settings: settings) }
    private var cache: AWSCredentialsCache { AWSCredentialsCache(store: context.store) }

    func credentials() throws -> TemporaryAWSCredentials {
        // The cache serves only the session stored now: signed out (or in as someone else), nothing.
        guard let session = try sessions.stored() else {
            // Signed out: credentials left from the session are of no further use here.
            _ = try? cache.remove(profile: settings.profile)
            throw SessionError.notSignedIn(profile: settings.profile)
        }
        try sessions.checkConfiguredClient(session)
        if let entry = try usableEntry(for: session) { return entry.credentials }

        // A lock of its own (not the session's): the credentials cache is this type's, not the session layer's.
        return try ProfileLock.withLock(profile: settings.profile + ".aws-credentials", environment: context.environment) {
            // Another process may have fetched while this one waited.
            let current = try sessions.stored() ?? session
            if let entry = try usableEntry(for: current) { return entry.credentials }
            return try fetch()
        }
    }

    private func usableEntry(for session: StoredSession) throws -> AWSCredentialsCache.Entry? {
        guard let entry = try cache.load(profile: settings.profile, identityPoolId: pool.identityPoolId),
              entry.belongs(to: session, pool: pool),
              entry.credentials.validFor(Self.renewalMargin, now: context.now()) else { return nil }
        return entry
    }

    /// Under the lock: a fresh id token (refreshed first when needed, under the session's lock),
    /// the identity id (kept from an earlier fetch, else GetId), then the credentials.
    private func fetch() throws -> TemporaryAWSCredentials {
        let session = try sessions.freshSession(minValidity: 60, for: .id)
        guard !session.idToken.isEmpty else {
            throw AuthctlError(.notAuthorized, "the session of profile \(settings.profile) holds no id token. Run: authctl signin")
        }
        let identity = CognitoIdentityService(endpoint: pool.endpoint, transport: try context.transport(settings),
                                              retryPolicy: context.retryPolicy)
        let logins = [CognitoIdentityService.providerName(userPoolId: session.userPoolId): session.idToken]
        let kept = try? cache.load(profile: settings.profile, identityPoolId: pool.identityPoolId)
        var identityId = kept.flatMap { $0.sameIdentity(session, pool: pool) ? $0.identityId : nil }

        let answer: IdentityCredentials
        do {
            do {
                let id = try identityId ?? identity.getId(identityPoolId: pool.identityPoolId, logins: logins)
                identityId = id
                answer = try identity.getCredentialsForIdentity(identityId: id, logins: logins, customRoleArn: pool.roleArn,
                                                                now: context.now())
            } catch let error as CognitoIdentityError where error.reason == .notFound && kept?.identityId == identityId && identityId != nil {
                // The identity kept from an earlier fetch was deleted from the pool: ask for this login's own.
                let id = try identity.getId(identityPoolId: pool.identityPoolId, logins: logins)
                answer = try identity.getCredentialsForIdentity(identityId: id, logins: logins, customRoleArn: pool.roleArn,
                                                                now: context.now())
            }
        } catch let error as CognitoIdentityError {
            throw Self.failure(error, pool: pool, userPoolId: session.userPoolId)
        }

        let entry = AWSCredentialsCache.Entry(profile: settings.profile, identityPoolId: pool.identityPoolId,
                                              userPoolId: session.userPoolId, sub: session.sub, roleArn: pool.roleArn,
                                              identityId: answer.identityId, credentials: answer.credentials)
        do {
            try cache.save(entry)
        } catch let error as SecureStoreError {
            // The credentials are good: hand them out, and say the next call will fetch again.
            context.console.message("authctl: warning: the AWS credentials could not be cached (\(AuthctlError.from(error).message)); the next call fetches them again.")
        }
        return answer.credentials
    }

    /// What an identity-pool refusal means to the person, and its exit code.
    static func failure(_ error: CognitoIdentityError, pool: IdentityPoolSettings, userPoolId: String) -> AuthctlError {
        let detail = error.description
        switch error.reason {
        case .loginRefused, .loginConflict:
            return AuthctlError(.notAuthorized, """
                identity pool \(pool.identityPoolId) refused the sign-in (\(detail)); its authentication providers must \
                include user pool \(userPoolId) and this app client
                """)
        case .notFound:
            return AuthctlError(.configuration, "Cognito Identity at \(pool.endpoint) does not know identity pool \(pool.identityPoolId) (\(detail))")
        case .noUsableRole:
            let role = pool.roleArn.map { "role \($0) for this user (is it one of the pool's role-mapping rules?)" }
                ?? "an authenticated role"
            return AuthctlError(.configuration, "identity pool \(pool.identityPoolId) cannot give \(role): \(detail)")
        case .invalidParameter:
            return AuthctlError(.configuration, "Cognito Identity refused the request: \(detail)")
        case .throttled:
            return AuthctlError(.throttled, "Too many requests to Cognito Identity; wait a little and try again (\(detail))")
        case .unreachable:
            return AuthctlError(.unavailable, "cannot reach Cognito Identity at \(pool.endpoint): \(detail)")
        case .serviceFailure, .externalService, .malformedAnswer:
            return AuthctlError(.unavailable, "Cognito Identity at \(pool.endpoint) failed: \(detail)")
        case .other:
            return AuthctlError(.unexpected, "Cognito Identity answered \(detail)")
        }
    }
}

/// The cached credentials and identity id of one profile and identity pool, as one Secret
/// Service item (kind `aws-credentials`, `client_id` = the identity pool id). An item for another
/// identity pool of the profile is replaced by it.
struct AWSCredentialsCache {
    let store: SecretStore

    struct Entry: Codable, Equatable {
        var version = 1
        var profile: String
        var identityPoolId: String
        var userPoolId: String
        /// The user the identity belongs to (the session's `sub`).
        var sub: String
        var roleArn: String?
        var identityId: String
        var credentials: TemporaryAWSCredentials

        /// The identity id is this user's in this pool.
        func sameIdentity(_ session: StoredSession, pool: IdentityPoolSettings) -> Bool {
            identityPoolId == pool.identityPoolId && userPoolId == session.userPoolId && sub == session.sub && !sub.isEmpty
        }

        /// The credentials are for this user, this pool and the role asked for.
        func belongs(to session: StoredSession, pool: IdentityPoolSettings) -> Bool {
            sameIdentity(session, pool: pool) && roleArn == pool.roleArn
        }
    }

    static let kind = "aws-credentials"

    func load(profile: String, identityPoolId: String) throws -> Entry? {
        guard let json = try store.read(SecretKey(kind: Self.kind, profile: profile, clientId: identityPoolId)) else { return nil }
        // An unreadable item is no cache: it is fetched again and replaced.
        return try? StoredSession.decoder.decode(Entry.self, from: Data(json.utf8))
    }

    /// Removes the profile's cached credentials, whatever their identity pool.
    @discardableResult
    func remove(profile: String) throws -> Bool {
        try store.delete(SecretKey(kind: Self.kind, profile: profile))
    }

    func save(_ entry: Entry) throws {
        let data = try StoredSession.encoder.encode(entry)
        try store.write(SecretKey(kind: Self.kind, profile: entry.profile, userPoolId: entry.userPoolId, clientId: entry.identityPoolId),
                        label: "authctl AWS credentials: identity pool \(entry.identityPoolId) (profile \(entry.profile))",
                        secret: String(decoding: data, as: UTF8.self))
    }
}

extension TemporaryAWSCredentials {
    /// The variables the AWS CLI and SDKs read (AWS_CREDENTIAL_EXPIRATION as aws-vault and the SDKs' tooling set it).
    var environment: [(name: String, value: String)] {
        [("AWS_ACCESS_KEY_ID", accessKeyId), ("AWS_SECRET_ACCESS_KEY", secretAccessKey),
         ("AWS_SESSION_TOKEN", sessionToken), ("AWS_CREDENTIAL_EXPIRATION", Format.iso8601(expiration))]
    }
}

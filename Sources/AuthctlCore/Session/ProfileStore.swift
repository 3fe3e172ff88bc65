import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one owner of everything authctl keeps for a profile (as GitHub CLI's AuthConfig is the only
/// importer of its keyring): sessions, pending sign-ins, the client secret, remembered devices and
/// the two credential caches, each by a typed operation; and the profile's locks. Nothing else
/// names a store item, encodes a kept record or takes a lock; the backend (`SecretStore`) sits
/// behind a protocol so other stores plug in here.
package struct ProfileStore {
    package let source: StoreBackend
    package let environment: [String: String]
    package let profile: String

    package init(source: StoreBackend, environment: [String: String], profile: String) {
        self.source = source
        self.environment = environment
        self.profile = profile
    }

    /// The store this profile uses in this command (`StoreBackend.kind(of:)`), opened on first
    /// use, its errors naming it and the other stores (`ExplainedStore`).
    private var backend: SecretStore {
        get throws {
            let kind = try source.kind(of: profile, environment: environment)
            return ExplainedStore(
                source.store(kind, environment: environment), kind: kind, profile: profile,
                recorded: source.isRecorded(profile))
        }
    }

    /// Writes an item, then records the profile's store the first time it keeps something.
    private func put(_ key: SecretKey, label: String, secret: String) throws {
        try backend.write(key, label: label, secret: secret)
        source.pin(profile, environment: environment)
    }

    /// Which store the profile's items are in (throws when a request names another).
    package var storeKind: StoreKind {
        get throws { try source.kind(of: profile, environment: environment) }
    }

    // MARK: the locks

    /// What a lock guards. Each is an exclusive `flock` of its own (`ProfileLock`): the caches
    /// are filled under their own lock, taken before the session's, never after, so a cache fill
    /// that refreshes the session cannot deadlock with a refresh.
    package enum Lock {
        case session
        case awsCredentials
        case machineTokens

        package var suffix: String {
            switch self {
            case .session: return ""
            case .awsCredentials: return ".aws-credentials"
            case .machineTokens: return ".machine-token"
            }
        }
    }

    /// Runs `body` holding `lock` of this profile (waiting for another process that holds it).
    package func locked<T>(_ lock: Lock, _ body: () throws -> T) throws -> T {
        guard let trace = source.trace else {
            return try ProfileLock.withLock(profile: profile + lock.suffix, environment: environment, body)
        }
        let asked = Trace.clock()
        return try ProfileLock.withLock(profile: profile + lock.suffix, environment: environment) {
            trace.record(.lock(lock, taken: true, waited: Trace.clock() - asked))
            defer { trace.record(.lock(lock, taken: false, waited: 0)) }
            return try body()
        }
    }

    // MARK: the session

    /// The stored session, if any. Throws `SessionError.unreadable` for an item that is not one.
    package func session() throws -> StoredSession? {
        guard let text = try backend.read(StoreItem.session.key(profile: profile)) else { return nil }
        guard let session = StoreRecordCodec.decode(StoredSession.self, from: text) else {
            throw SessionError.unreadable(profile: profile)
        }
        return session
    }

    /// Only through `LockedSession` (with the session lock held).
    fileprivate func save(_ session: StoredSession) throws {
        try put(
            StoreItem.session.key(profile: profile, userPoolId: session.userPoolId, clientId: session.clientId),
            label: session.label, secret: try StoreRecordCodec.encode(session))
    }

    fileprivate func removeSession() throws -> Bool {
        try backend.delete(StoreItem.session.key(profile: profile))
    }

    // MARK: the app client's secret

    /// The secret `configure` kept, and only for that client: a secret left from another client
    /// would be sent as a SECRET_HASH the service refuses.
    package func clientSecret(clientId: String) throws -> String? {
        try backend.read(StoreItem.clientSecret(clientId: clientId).key(profile: profile))
    }

    package func keepClientSecret(_ secret: String, userPoolId: String, clientId: String) throws {
        let item = StoreItem.clientSecret(clientId: clientId)
        try put(item.key(profile: profile, userPoolId: userPoolId), label: item.label(profile: profile), secret: secret)
    }

    @discardableResult
    package func forgetClientSecret() throws -> Bool {
        try backend.delete(StoreItem.clientSecret(clientId: "").key(profile: profile))
    }

    // MARK: a sign-in waiting for a code

    /// The pending sign-in, expired or not (the caller tells the person which). One that cannot
    /// be read is removed: it can never be finished.
    package func pendingChallenge() throws -> PendingChallenge? {
        let key = StoreItem.pendingChallenge.key(profile: profile)
        guard let text = try backend.read(key) else { return nil }
        guard let pending = StoreRecordCodec.decode(PendingChallenge.self, from: text) else {
            _ = try? backend.delete(key)
            return nil
        }
        return pending
    }

    /// Opens everything a write of this profile's items needs (the file store: its directory, a
    /// passphrase, the existing file) without writing: before a sign-in or a challenge that only
    /// a kept item can finish, so an unusable store is refused before the service is asked.
    package func checkCanKeep() throws {
        try backend.prepareToKeep(profile: profile)
    }

    package func keep(_ pending: PendingChallenge) throws {
        let what = pending.challengeName == .mfaSetup ? "authenticator set-up" : "sign-in code"
        try put(
            StoreItem.pendingChallenge.key(
                profile: profile, userPoolId: pending.userPoolId, clientId: pending.clientId),
            label: "authctl pending \(what): \(pending.displayName) (profile \(profile))",
            secret: try StoreRecordCodec.encode(pending))
    }

    /// Best effort: a pending sign-in left behind expires within minutes anyway.
    package func discardPendingChallenge() {
        _ = try? backend.delete(StoreItem.pendingChallenge.key(profile: profile))
    }

    // MARK: remembered devices (this machine's, by pool and user)

    /// The device of `name` (the username, or an alias it signed in with) in the pool. An item
    /// that cannot be read is no device: the next sign-in makes a new one and replaces it.
    package func device(userPoolId: String, name: String) throws -> StoredDevice? {
        if let device = try readDevice(userPoolId: userPoolId, username: name) { return device }
        guard
            let username = try backend.read(
                StoreItem.deviceAlias(userPoolId: userPoolId, alias: name).key(profile: profile))
        else {
            return nil
        }
        return try readDevice(userPoolId: userPoolId, username: username)
    }

    private func readDevice(userPoolId: String, username: String) throws -> StoredDevice? {
        try backend.read(StoreItem.device(userPoolId: userPoolId, username: username).key(profile: profile))
            .flatMap { StoreRecordCodec.decode(StoredDevice.self, from: $0) }
    }

    package func keep(_ device: StoredDevice) throws {
        let item = StoreItem.device(userPoolId: device.userPoolId, username: device.username)
        try put(
            item.key(profile: profile), label: item.label(profile: profile), secret: try StoreRecordCodec.encode(device)
        )
        for alias in device.aliases {
            let pointer = StoreItem.deviceAlias(userPoolId: device.userPoolId, alias: alias)
            try put(pointer.key(profile: profile), label: pointer.label(profile: profile), secret: device.username)
        }
    }

    package func forget(_ device: StoredDevice) throws {
        for alias in device.aliases {
            try backend.delete(StoreItem.deviceAlias(userPoolId: device.userPoolId, alias: alias).key(profile: profile))
        }
        try backend.delete(
            StoreItem.device(userPoolId: device.userPoolId, username: device.username).key(profile: profile))
    }

    // MARK: cached AWS credentials

    /// The cached credentials of `identityPoolId`; an unreadable item is no cache (it is fetched
    /// again and replaced).
    package func awsCredentials(identityPoolId: String) throws -> CachedAWSCredentials? {
        try backend.read(StoreItem.awsCredentials(identityPoolId: identityPoolId).key(profile: profile))
            .flatMap { StoreRecordCodec.decode(CachedAWSCredentials.self, from: $0) }
    }

    package func keep(_ entry: CachedAWSCredentials) throws {
        let item = StoreItem.awsCredentials(identityPoolId: entry.identityPoolId)
        try put(
            item.key(profile: profile, userPoolId: entry.userPoolId), label: item.label(profile: profile),
            secret: try StoreRecordCodec.encode(entry))
    }

    // MARK: cached machine tokens

    /// The cached client_credentials tokens of `clientId` by scope set; an unreadable item is an
    /// empty cache (it is replaced). A missing store throws here, before any request.
    package func machineTokens(clientId: String) throws -> [String: MachineToken] {
        try backend.read(StoreItem.machineTokens(clientId: clientId).key(profile: profile))
            .flatMap { StoreRecordCodec.decode([String: MachineToken].self, from: $0) } ?? [:]
    }

    package func keep(machineTokens: [String: MachineToken], userPoolId: String, clientId: String) throws {
        let item = StoreItem.machineTokens(clientId: clientId)
        try put(
            item.key(profile: profile, userPoolId: userPoolId), label: item.label(profile: profile),
            secret: try StoreRecordCodec.encode(machineTokens))
    }

    // MARK: what the profile keeps

    /// The kinds of item the profile keeps now, and a remembered device of `user` in `userPoolId`
    /// when one is given (devices are this machine's, not the profile's).
    package func inventory(deviceOf user: (userPoolId: String, username: String)?) throws -> [StoreItem.Kind] {
        var kinds: [StoreItem.Kind] = []
        let probes: [StoreItem] = [
            .session, .pendingChallenge, .clientSecret(clientId: ""), .awsCredentials(identityPoolId: ""),
            .machineTokens(clientId: ""),
        ]
        for item in probes where try backend.read(item.key(profile: profile)) != nil {
            kinds.append(item.kind)
        }
        if let user, try device(userPoolId: user.userPoolId, name: user.username) != nil {
            kinds.append(.device)
        }
        return kinds
    }

    /// What belongs to a session that ended here: its cached AWS credentials and a pending
    /// sign-in. The client secret (configuration) and remembered devices (this machine's) stay.
    /// Returns the failures, for the report to say; one failure does not stop the others.
    package func removeSessionDerived() -> [Error] {
        var failures: [Error] = []
        for item in [StoreItem.awsCredentials(identityPoolId: ""), .pendingChallenge] {
            do { _ = try backend.delete(item.key(profile: profile)) } catch { failures.append(error) }
        }
        return failures
    }
}

/// The profile's store while `ProfileSession.locked` holds the session lock: the only way to save
/// or remove a session. Made nowhere else.
package struct LockedSession {
    fileprivate let store: ProfileStore
    package var profile: String { store.profile }

    fileprivate init(store: ProfileStore) { self.store = store }

    package func load() throws -> StoredSession? { try store.session() }

    /// Stores `session`; Ctrl-C, SIGTERM and SIGHUP wait until it is stored.
    package func save(_ session: StoredSession) throws {
        ProcessSafety.deferTermination()
        defer { ProcessSafety.releaseTermination() }
        try store.save(session)
    }

    /// Removes the session and what belongs to it (`removeSessionDerived`): a failure to remove the
    /// session is thrown; one of the rest is returned.
    @discardableResult
    package func remove() throws -> Bool {
        let removed = try store.removeSession()
        _ = store.removeSessionDerived()
        return removed
    }

    /// After the account was deleted: the session, what derives from it, and this machine's
    /// remembered device of the account (useless now). The client secret and cached machine
    /// tokens are the app client's, not the account's, and stay. Returns what was removed.
    package func removeDeletedAccount(userPoolId: String, username: String) throws -> [StoreItem.Kind] {
        var removed: [StoreItem.Kind] = []
        if try store.removeSession() { removed.append(.session) }
        _ = store.removeSessionDerived()
        if let device = try store.device(userPoolId: userPoolId, name: username) {
            try store.forget(device)
            removed.append(.device)
        }
        return removed
    }

    /// Removes the stored session only while it is `session` (same access token).
    package func remove(ifStill session: StoredSession) throws -> Bool {
        guard let current = (try? load()) ?? nil, current.accessToken == session.accessToken else { return false }
        return try remove()
    }
}

extension ProfileStore {
    /// Runs `body` with the session lock held, handing it the one value that may save or remove
    /// the session.
    package func withLockedSession<T>(_ body: (LockedSession) throws -> T) throws -> T {
        try locked(.session) { try body(LockedSession(store: self)) }
    }
}

extension CommandContext {
    /// Everything kept for `profile`.
    package func profileStore(_ profile: String) -> ProfileStore {
        backend.profile(profile, environment: environment)
    }
}

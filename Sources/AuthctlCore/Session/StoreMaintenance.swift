import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `status` says a store promises about the profile's items.
extension ProfileStore {
    package func storePromise() throws -> String {
        try source.promise(of: storeKind, profile: profile, environment: environment)
    }
}

extension StoreBackend {
    package func promise(of kind: StoreKind, profile: String, environment: [String: String]) throws -> String {
        switch kind {
        case .secretService:
            return "the Secret Service"
        case .kernelKeyring:
            guard let keyring = store(kind, environment: environment) as? KernelKeyringStore else { return kind.name }
            switch try keyring.persistence {
            case .persistent(let expiry?):
                return "the kernel keyring (kernel memory, lost at reboot, removed after \(expiry) s unused)"
            case .persistent(nil):
                return "the kernel keyring (kernel memory, lost at reboot, removed after the kernel's idle timeout)"
            case .userKeyring:
                return "the kernel's user keyring (kernel memory, lost at reboot and when your last session ends)"
            }
        case .file:
            // Whose passphrase opens the file cannot be known without it: only how its header
            // stands among the directory's files (a file whose header no other file carries was
            // not written by this store's rules).
            let directory = StoreLocations.fileDirectory(environment: environment)
            let standing = try (store(kind, environment: environment) as? AgeFileStore)?.passphraseStanding(
                profile: profile)
            switch standing {
            case .sharedWithEveryFile:
                return "\(directory)/ (an age file, encrypted with the passphrase of every file there)"
            case .differsFromOthers:
                return "\(directory)/ (an age file whose passphrase is not the one of every file there: "
                    + "`authctl unlock` names the files a passphrase does not open)"
            case .alone, .noFile, nil:
                return "\(directory)/ (a passphrase-encrypted file, age format)"
            }
        }
    }

    /// The store the profile would use, without refusing a request that names another than the
    /// recorded one (`store doctor` reports that instead).
    package func intended(profile: String, environment: [String: String]) throws
        -> (kind: StoreKind, recorded: StoreKind?, requested: (kind: StoreKind, origin: String)?)
    {
        let requested = try requested(environment: environment)
        let recorded = try self.recorded(profile: profile, environment: environment)
        let kind = recorded ?? requested?.kind ?? .default
        trace?.record(
            .store(kind, choice(recorded: recorded != nil, requested: requested != nil)))
        return (kind, recorded, requested)
    }
}

// MARK: store doctor

/// One store's state on this host.
package struct StoreCheck: Encodable {
    package var store: String
    package var usable: Bool
    /// What it promises when usable; else what is missing and the fix.
    package var detail: String
    /// The store the profile uses.
    package var selected: Bool

    package init(store: String, usable: Bool, detail: String, selected: Bool) {
        self.store = store
        self.usable = usable
        self.detail = detail
        self.selected = selected
    }
}

extension StoreBackend {
    /// Checks each store as `profile` would use it: reaching it and listing the profile's items
    /// (which opens the profile's file, if any, with the passphrase). Never prompts: a terminal
    /// is reported as where the passphrase would be asked.
    package func check(_ kind: StoreKind, profile: String, environment: [String: String], canPrompt: Bool) -> (
        usable: Bool, detail: String
    ) {
        let result = checked(kind, profile: profile, environment: environment, canPrompt: canPrompt)
        trace?.record(.storeCheck(kind, usable: result.usable))
        return result
    }

    private func checked(_ kind: StoreKind, profile: String, environment: [String: String], canPrompt: Bool) -> (
        usable: Bool, detail: String
    ) {
        do {
            switch kind {
            case .secretService:
                let items = try store(kind, environment: environment).keys(profile: profile)
                return (true, "reachable and unlocked; \(items.count) item(s) of profile \(profile)")
            case .kernelKeyring:
                let items = try store(kind, environment: environment).keys(profile: profile)
                return (
                    true,
                    "\(try promise(of: kind, profile: profile, environment: environment)); \(items.count) item(s) of profile \(profile)"
                )
            case .file:
                let directory = StoreLocations.fileDirectory(environment: environment)
                let resolved: (passphrase: String, origin: PassphraseOrigin)
                do {
                    resolved = try PassphraseSource.standard(environment: environment, fileDescriptor: passphraseFD)
                        .passphrase()
                } catch let error as SecureStoreError where error.cause == .noPassphrase && canPrompt {
                    return (true, "\(directory)/; no passphrase source is set, so it would be asked on the terminal")
                }
                let file = AgeFileStore(directory: directory, passphrase: .fixed(resolved.passphrase))
                let items = try file.keys(profile: profile)
                let opened =
                    FileManager.default.fileExists(atPath: file.path(profile: profile))
                    ? "opens \(file.path(profile: profile)), " : ""
                let exposure = PassphraseFileExposure.of(resolved.origin).map { "; warning: \($0)" } ?? ""
                return (
                    true,
                    "\(directory)/; passphrase from \(resolved.origin); \(opened)\(items.count) item(s) of profile \(profile)\(exposure)"
                )
            }
        } catch let error as SecureStoreError {
            return (false, error.message)
        } catch let error as AuthctlError {
            return (false, error.message)
        } catch {
            return (false, "\(error)")
        }
    }
}

// MARK: store migrate

/// How `store migrate` went.
package struct MigrationOutcome {
    package var from: StoreKind?
    package var to: StoreKind
    package var moved: [String]
    /// A migration interrupted after its pin, finished now.
    package var resumed: Bool
    package var removalFailures: [String]
}

extension ProfileStore {
    /// Moves every item of the profile to `target` and records it: copy, read back, record
    /// (with the store it came from), delete the old items, clear the note. Holding the
    /// profile's locks (caches' before the session's), so no refresh writes meanwhile. Running
    /// it again after an interruption finishes the job: before the record it copies again, after
    /// it deletes what is left in the old store.
    package func migrate(to target: StoreKind, deviceOf user: (userPoolId: String, username: String)?) throws
        -> MigrationOutcome
    {
        try locked(.machineTokens) {
            try locked(.awsCredentials) {
                try locked(.session) { try migrateLocked(to: target, deviceOf: user) }
            }
        }
    }

    private func explained(_ kind: StoreKind) -> SecretStore {
        ExplainedStore(source.store(kind, environment: environment), kind: kind, profile: profile, recorded: false)
    }

    private func migrateLocked(to target: StoreKind, deviceOf user: (userPoolId: String, username: String)?) throws
        -> MigrationOutcome
    {
        let intended = try source.intended(profile: profile, environment: environment)
        if let unfinished = try StoreRecord.migratingFrom(profile: profile, environment: environment),
            intended.recorded == target
        {
            // The note says the items were copied; a stale or edited one may lie: an item the target
            // lacks is copied (and read back) before its old copy goes.
            let old = explained(unfinished)
            let new = explained(target)
            var moved: [String] = []
            for key in try old.keys(profile: profile) where try new.read(key) == nil {
                guard let secret = try old.read(key) else { continue }
                try copy(key, secret: secret, to: new, named: target, from: unfinished)
                moved.append(key.kind)
            }
            let failures = removeAll(from: old)
            if failures.isEmpty { try StoreRecord.record(target, profile: profile, environment: environment) }
            source.forget(profile)
            return MigrationOutcome(
                from: unfinished, to: target, moved: moved, resumed: true, removalFailures: failures)
        }
        let from = intended.recorded ?? intended.requested?.kind ?? .default
        // An interrupted copy into another store than the one asked for now (migrating back): removed.
        if let leftover = try StoreRecord.migratingTo(profile: profile, environment: environment), leftover != target,
            leftover != from
        {
            let failures = removeAll(from: explained(leftover))
            guard failures.isEmpty else {
                return MigrationOutcome(from: leftover, to: target, moved: [], resumed: true, removalFailures: failures)
            }
            try StoreRecord.noteMigrating(to: nil, profile: profile, environment: environment)
        }
        guard from != target else {
            try StoreRecord.record(target, profile: profile, environment: environment)
            source.forget(profile)
            return MigrationOutcome(from: nil, to: target, moved: [], resumed: false, removalFailures: [])
        }
        let old = explained(from)
        let new = explained(target)
        var keys = try old.keys(profile: profile)
        // The user's remembered device is the machine's (keyed by pool and user): copied so the
        // profile keeps it, and left in the old store for the profiles that still use it.
        var deviceKeys: [SecretKey] = []
        if let user {
            let device = StoreItem.device(userPoolId: user.userPoolId, username: user.username).key(profile: profile)
            if let text = try old.read(device) {
                deviceKeys.append(device)
                for alias in StoreRecordCodec.decode(StoredDevice.self, from: text)?.aliases ?? [] {
                    deviceKeys.append(
                        StoreItem.deviceAlias(userPoolId: user.userPoolId, alias: alias).key(profile: profile))
                }
            }
        }
        keys += deviceKeys
        try StoreRecord.noteMigrating(to: target, profile: profile, environment: environment)
        var moved: [String] = []
        for key in keys {
            guard let secret = try old.read(key) else { continue }
            try copy(key, secret: secret, to: new, named: target, from: from)
            moved.append(key.kind)
        }
        // The file store: the new file, read back from the disk, opens with the passphrase before
        // anything is deleted from the old store.
        if target == .file, let file = source.store(.file, environment: environment) as? AgeFileStore {
            do { try file.verifyOnDisk(profile: profile) } catch { throw AuthctlError.from(error) }
        }
        try StoreRecord.record(target, profile: profile, environment: environment, migratingFrom: from)
        source.forget(profile)
        let failures = removeAll(from: old)
        if failures.isEmpty { try StoreRecord.record(target, profile: profile, environment: environment) }
        return MigrationOutcome(from: from, to: target, moved: moved, resumed: false, removalFailures: failures)
    }

    /// Writes `secret` to `store` and reads it back; nothing is removed from `from` otherwise.
    private func copy(_ key: SecretKey, secret: String, to store: SecretStore, named target: StoreKind, from: StoreKind)
        throws
    {
        try store.write(key, label: StoreItem.label(of: key, profile: profile), secret: secret)
        guard try store.read(key) == secret else {
            throw AuthctlError(
                .unexpected,
                "\(target.name) did not give back the \(key.kind) just copied; nothing was removed from \(from.name)")
        }
    }

    /// Deletes every item of the profile from `store`; returns the failures.
    private func removeAll(from store: SecretStore) -> [String] {
        do {
            var failures: [String] = []
            for key in try store.keys(profile: profile) {
                do { try store.delete(key) } catch { failures.append(AuthctlError.from(error).message) }
            }
            return failures
        } catch {
            return [AuthctlError.from(error).message]
        }
    }
}

extension StoreItem {
    /// The label of a listed key (what `store migrate` writes in the new store).
    package static func label(of key: SecretKey, profile: String) -> String {
        let item: StoreItem
        switch Kind(rawValue: key.kind) {
        case .session?: item = .session
        case .pendingChallenge?: item = .pendingChallenge
        case .clientSecret?: item = .clientSecret(clientId: key.clientId)
        case .awsCredentials?: item = .awsCredentials(identityPoolId: key.clientId)
        case .machineTokens?: item = .machineTokens(clientId: key.clientId)
        case .device?, .deviceAlias?, nil:
            let parts = key.profile.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { return "authctl \(key.kind) (profile \(profile))" }
            item =
                key.kind == Kind.device.rawValue
                ? .device(userPoolId: parts[0], username: parts[1])
                : .deviceAlias(userPoolId: parts[0], alias: parts[1])
        }
        return item.label(profile: profile)
    }
}

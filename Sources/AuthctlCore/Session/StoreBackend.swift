import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The stores a profile's items can live in. Chosen explicitly (`--store`, `AUTHCTL_STORE`, the
/// profile's `store`), recorded in the profile on its first kept item, never a fallback.
package enum StoreKind: String, CaseIterable, Sendable {
    case secretService = "secret-service"
    case kernelKeyring = "kernel-keyring"
    case file

    package static let `default` = StoreKind.secretService
    package static let variable = "AUTHCTL_STORE"

    /// How a person names it in a sentence.
    package var name: String {
        switch self {
        case .secretService: return "the Secret Service"
        case .kernelKeyring: return "the kernel keyring"
        case .file: return "the encrypted file store"
        }
    }

    /// What it needs, for the list of alternatives in an error.
    package var need: String {
        switch self {
        case .secretService: return "a desktop keyring on a D-Bus session bus"
        case .kernelKeyring: return "keyctl allowed; kept in kernel memory until reboot"
        case .file:
            return
                "a passphrase: --passphrase-fd N, AUTHCTL_STORE_PASSPHRASE_FILE, AUTHCTL_STORE_PASSPHRASE or a terminal"
        }
    }

    package static func parse(_ text: String, origin: String) throws -> StoreKind {
        guard let kind = StoreKind(rawValue: text) else {
            throw AuthctlError(
                .configuration,
                """
                \(origin) names the store "\(text)", which authctl does not know: \
                use \(allCases.map(\.rawValue).joined(separator: ", "))
                """)
        }
        return kind
    }
}

/// Where the profiles' items live: each profile's store resolved on first use (the store asked
/// for with `--store`/`AUTHCTL_STORE`, else the profile's recorded `store`, else the default),
/// each store opened at most once per process, and the store recorded in the profile the first
/// time it keeps something.
package final class StoreBackend {
    /// How a store of a kind is opened (the process host's; tests pass their own). Named here so
    /// the store types stay with their one owner.
    package typealias Opener = (StoreKind, Opening) -> SecretStore
    /// One store for every kind (tests).
    package typealias SingleStore = () -> SecretStore

    /// What `live` opens a store with: the command's `--passphrase-fd`.
    package struct Opening {
        package var environment: [String: String]
        package var passphraseFD: Int32?
        /// A person may be asked for the file store's passphrase on the terminal.
        package var mayPrompt = true
        /// Whether a passphrase typed at a prompt for a profile also unlocks the key agent
        /// (the profile's resolved `unlock_after_prompt`).
        package var unlocksAfterPrompt: @Sendable (String) -> Bool = { _ in true }
        /// `--debug`: where the passphrase came from, what the key agent was asked.
        package var trace: Trace? = nil
    }

    private let open: (StoreKind, Opening) -> SecretStore
    /// Tests over one in-memory store: no config file is read or written.
    package let resolvesProfiles: Bool
    private var opened: [StoreKind: SecretStore] = [:]
    private var resolved: [String: StoreKind] = [:]
    private var pinned: Set<String> = []
    /// `--store` (the environment's `AUTHCTL_STORE` is read on use).
    package let option: StoreKind?
    /// `--passphrase-fd`.
    package let passphraseFD: Int32?
    /// False where a person must not be asked (`status`, kubectl's `spec.interactive: false`): a
    /// locked file store is then an error naming `authctl unlock`. The command's, given when the
    /// invocation is made (`AuthctlCommand.mayPrompt`).
    package let mayPrompt: Bool
    /// `--debug`: the store chosen and why, the locks taken.
    package let trace: Trace?

    /// The invocation's config document (nil: the one the environment of each call names).
    private let config: ConfigSource?

    package init(
        resolvesProfiles: Bool = true, option: StoreKind? = nil, passphraseFD: Int32? = nil, mayPrompt: Bool = true,
        config: ConfigSource? = nil, trace: Trace? = nil, _ open: @escaping (StoreKind, Opening) -> SecretStore
    ) {
        self.config = config
        self.trace = trace
        self.resolvesProfiles = resolvesProfiles
        self.option = option
        self.passphraseFD = passphraseFD
        self.mayPrompt = mayPrompt
        self.open = open
    }

    /// One store for every kind, nothing recorded (unit tests).
    package convenience init(_ open: @escaping () -> SecretStore) {
        self.init(resolvesProfiles: false) { _, _ in open() }
    }

    /// How the real stores are opened.
    package static func liveStores(console: Console) -> (StoreKind, Opening) -> SecretStore {
        let prompter = PassphrasePrompter(console: console)
        return { kind, opening in
            switch kind {
            case .secretService:
                var observer: SecretServiceObserver?
                if let trace = opening.trace { observer = { trace.record(.secretService($0)) } }
                return SecretServiceStore(timeout: 5, observer: observer)
            case .kernelKeyring:
                return KernelKeyringStore(namespace: StoreLocations.keyringNamespace(environment: opening.environment))
            case .file:
                let directory = StoreLocations.fileDirectory(environment: opening.environment)
                let standard = PassphraseSource.standard(
                    environment: opening.environment, fileDescriptor: opening.passphraseFD,
                    prompt: { opening.mayPrompt ? try prompter.ask(directory: directory) : nil })
                // A passphrase file others can read is used, and said.
                let source = PassphraseSource {
                    let resolved = try standard.passphrase()
                    opening.trace?.record(.passphrase(from: StaticWord(resolved.origin.traceName)))
                    if let exposure = PassphraseFileExposure.of(resolved.origin) {
                        console.message("authctl: warning: \(exposure)")
                    }
                    return resolved
                }
                var observer: FileStoreObserver?
                if let trace = opening.trace { observer = { trace.record(.fileStore($0)) } }
                return AgeFileStore(
                    directory: directory, passphrase: source,
                    agent: KeyAgentLauncher.use(
                        environment: opening.environment, unlocksAfterPrompt: opening.unlocksAfterPrompt),
                    observer: observer)
            }
        }
    }

    /// The config document this backend reads the profiles' `store` from.
    package func configSource(environment: [String: String]) -> ConfigSource {
        config ?? ConfigSource(environment: environment)
    }

    /// The store asked for by `--store` or `AUTHCTL_STORE`, and how it was asked for.
    package func requested(environment: [String: String]) throws -> (kind: StoreKind, origin: String)? {
        try SettingsResolver.requestedStore(option: option, environment: environment).map {
            ($0.value, $0.origin.description)
        }
    }

    /// The profile's recorded store, nil when none is (or nothing is recorded: unit tests).
    package func recorded(profile: String, environment: [String: String]) throws -> StoreKind? {
        guard resolvesProfiles else { return nil }
        return try SettingsResolver.recordedStore(profile: profile, in: configSource(environment: environment).file())?
            .value
    }

    /// The store `profile` uses in this command (`SettingsResolver.store`). A request naming
    /// another store than the one the profile's items are recorded in is refused (exit 78),
    /// never a second, empty copy.
    package func kind(of profile: String, environment: [String: String]) throws -> StoreKind {
        if let kind = resolved[profile] { return kind }
        let file = resolvesProfiles ? try configSource(environment: environment).file() : nil
        let store = try SettingsResolver.store(profile: profile, option: option, environment: environment, in: file)
        if store.origin.level == .profile { pinned.insert(profile) }
        resolved[profile] = store.value
        trace?.record(
            .store(
                store.value, choice(recorded: store.origin.level == .profile, requested: store.origin.level != .default)
            ))
        return store.value
    }

    /// Why a profile's store is the one it is (`--debug`).
    func choice(recorded: Bool, requested: Bool) -> StoreChoice {
        recorded ? .profile : !requested ? .default : option != nil ? .flag : .environment
    }

    /// The opened store of `kind`.
    package func store(_ kind: StoreKind, environment: [String: String]) -> SecretStore {
        if let store = opened[kind] { return store }
        let config = configSource(environment: environment)
        let unlocks: @Sendable (String) -> Bool = { profile in
            // The settings refused a bad value before any store was opened; should one get here
            // anyway, the key is not handed over.
            let file = try? config.file()
            return file.flatMap {
                try? SettingsResolver.unlockAfterPrompt(profile: profile, environment: environment, in: $0).value
            } ?? false
        }
        let store = open(
            kind,
            Opening(
                environment: environment, passphraseFD: passphraseFD, mayPrompt: mayPrompt,
                unlocksAfterPrompt: unlocks, trace: trace))
        opened[kind] = store
        return store
    }

    /// After `profile` kept an item: records its store in the config file the first time.
    /// Best effort: the item is kept whether or not the record could be written.
    package func pin(_ profile: String, environment: [String: String]) {
        guard resolvesProfiles, !pinned.contains(profile), let kind = resolved[profile] else { return }
        pinned.insert(profile)
        _ = try? StoreRecord.record(kind, profile: profile, environment: environment, onlyIfUnset: true)
    }

    /// Whether the profile's store is recorded in its config (so another is chosen with `configure --store`).
    package func isRecorded(_ profile: String) -> Bool { pinned.contains(profile) }

    /// Forgets what was resolved for `profile` (after `configure --store` or a migration).
    package func forget(_ profile: String) {
        resolved[profile] = nil
        pinned.remove(profile)
    }

    package func profile(_ profile: String, environment: [String: String]) -> ProfileStore {
        ProfileStore(source: self, environment: environment, profile: profile)
    }
}

/// The profile's `store` in config.toml: read, and written through the config writer.
package enum StoreRecord {
    /// Sets the profile's store (and its migration note); `onlyIfUnset` leaves a store recorded
    /// meanwhile by another process as it is.
    package static func record(
        _ kind: StoreKind, profile: String, environment: [String: String], onlyIfUnset: Bool = false,
        migratingFrom: StoreKind? = nil
    ) throws {
        try ConfigFile.update(path: ConfigFile.defaultPath(environment: environment)) { file in
            var entry = file.profiles[profile] ?? ProfileConfig()
            if onlyIfUnset, entry.store != nil { return }
            entry.store = kind.rawValue
            entry.storeMigratingFrom = migratingFrom?.rawValue
            entry.storeMigratingTo = nil
            file.profiles[profile] = entry
        }
    }

    /// Notes (or clears) the store a migration is copying into, before the first item is copied.
    static func noteMigrating(to kind: StoreKind?, profile: String, environment: [String: String]) throws {
        try ConfigFile.update(path: ConfigFile.defaultPath(environment: environment)) { file in
            var entry = file.profiles[profile] ?? ProfileConfig()
            entry.storeMigratingTo = kind?.rawValue
            file.profiles[profile] = entry
        }
    }

    /// The store an interrupted migration was copying into (its copy may be partial).
    package static func migratingTo(profile: String, environment: [String: String]) throws -> StoreKind? {
        let path = ConfigFile.defaultPath(environment: environment)
        guard let value = try ConfigFile.load(path: path).profiles[profile]?.storeMigratingTo, !value.isEmpty else {
            return nil
        }
        return try StoreKind.parse(value, origin: "store_migrating_to in [profiles.\(profile)] of \(path)")
    }

    package static func migratingFrom(profile: String, environment: [String: String]) throws -> StoreKind? {
        let path = ConfigFile.defaultPath(environment: environment)
        guard let value = try ConfigFile.load(path: path).profiles[profile]?.storeMigratingFrom, !value.isEmpty else {
            return nil
        }
        return try StoreKind.parse(value, origin: "store_migrating_from in [profiles.\(profile)] of \(path)")
    }
}

/// Where the kernel-keyring and file stores keep their items.
package enum StoreLocations {
    /// The configuration directory, which the kernel keyring's namespace is a hash of: two HOMEs
    /// (or two XDG_CONFIG_HOMEs) of one user never see each other's items.
    package static func configDirectory(environment: [String: String]) -> String {
        Paths.parent(of: ConfigFile.defaultPath(environment: environment))
    }

    /// FNV-1a (64 bits) of the configuration directory, in hex: a name, not a secret (every key
    /// of the user's keyring is the user's anyway).
    package static func keyringNamespace(environment: [String: String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in configDirectory(environment: environment).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// `$XDG_STATE_HOME/authctl`, by default `~/.local/state/authctl`.
    package static func fileDirectory(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/authctl" }
        return Paths.home(environment) + "/.local/state/authctl"
    }
}

/// Asks for the file store's passphrase on the terminal, without echo; twice when no file exists
/// yet (a mistyped new passphrase would lock the person out of what they keep).
package final class PassphrasePrompter: Sendable {
    private let console: Console

    package init(console: Console) { self.console = console }

    package func ask(directory: String) throws -> String? {
        guard console.canAskSecret else { return nil }
        let existing = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains {
            $0.hasSuffix(".age")
        }
        guard let first = try console.askSecret(SecretQuestion("Passphrase of authctl's file store (\(directory)): "))
        else {
            return nil
        }
        if existing { return first }
        guard let again = try console.askSecret(SecretQuestion("The same passphrase again: ")) else { return nil }
        guard again == first else {
            throw AuthctlError(.usage, "the two passphrases differ; nothing was kept")
        }
        return first
    }
}

/// The store layer's texts.
package enum StoreMessages {
    package static func pinnedElsewhere(
        profile: String, recorded: StoreKind, configFile: String, requested: StoreKind,
        origin: String
    ) -> String {
        """
        profile \(profile) keeps its items in \(recorded.name) (store = "\(recorded.rawValue)" in \(configFile)), \
        but \(origin) names \(requested.name); authctl does not start a second, empty copy. \
        Move the items: authctl store migrate --to \(requested.rawValue)\(profileFlag(profile)); \
        or use \(recorded.rawValue) (leave out \(origin))
        """
    }

    /// `store` unusable: what is missing (the store's own words) and the others, one command each.
    package static func unusable(_ kind: StoreKind, profile: String, pinned: Bool, detail: String) -> String {
        let others = StoreKind.allCases.filter { $0 != kind }.map { other in
            (pinned
                ? "authctl configure --store \(other.rawValue)\(profileFlag(profile))" : "--store \(other.rawValue)")
                + " (\(other.need))"
        }
        let lead =
            kind == .secretService ? Messages.keyringUnavailable(detail) : "\(kind.name) cannot be used: \(detail)"
        let rest =
            "\(lead). Other stores: \(others.joined(separator: "; ")). `authctl store doctor` checks each on this host"
        guard kind == .secretService else { return rest }
        return headlessAdvice(
            profile: profile, keyctlWorks: (try? KernelKeyringStore(namespace: "probe").persistence) != nil)
            + "\n" + rest
    }

    /// The first line on a host without a Secret Service: one command for this host (the kernel
    /// keyring where keyctl works, else the file store with `authctl unlock`); the details after.
    package static func headlessAdvice(profile: String, keyctlWorks: Bool) -> String {
        let flag = profileFlag(profile)
        return keyctlWorks
            ? "No Secret Service on this host: use the kernel keyring, `authctl configure --store kernel-keyring\(flag)` "
                + "(kept in kernel memory, lost at reboot)"
            : "No Secret Service on this host and keyctl is blocked: use the encrypted file store, "
                + "`authctl configure --store file\(flag)`, then `authctl unlock` once per session"
    }

    package static func profileFlag(_ profile: String) -> String {
        profile == "default" ? "" : " --profile \(ShellWord.quoted(profile))"
    }
}

/// A store whose errors name it, what is missing and the other stores (one command each). The
/// Secret Service's keep their type (callers may sign in without keeping, saying so); those of
/// the stores a person chose explicitly become the command's error: never a silent fallback.
package final class ExplainedStore: SecretStore {
    private let store: SecretStore
    private let kind: StoreKind
    private let profile: String
    private let recorded: Bool

    package init(_ store: SecretStore, kind: StoreKind, profile: String, recorded: Bool) {
        self.store = store
        self.kind = kind
        self.profile = profile
        self.recorded = recorded
    }

    package func read(_ key: SecretKey) throws -> String? { try explained { try store.read(key) } }
    package func write(_ key: SecretKey, label: String, secret: String) throws {
        try explained { try store.write(key, label: label, secret: secret) }
    }
    @discardableResult
    package func delete(_ key: SecretKey) throws -> Bool { try explained { try store.delete(key) } }
    package func keys(profile: String) throws -> [SecretKey] { try explained { try store.keys(profile: profile) } }
    package func prepareToKeep(profile: String) throws { try explained { try store.prepareToKeep(profile: profile) } }
    package var keyAgent: KeyAgentUnlocking? { store.keyAgent }

    private func explained<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch var error as SecureStoreError {
            switch (error.kind, error.cause) {
            case (_, .wrongPassphrase?), (_, .corrupted?), (_, .tooLarge?), (.failed, _):
                error.message = "\(kind.name): \(error.message)"
            case (_, .storeLocked?):
                // The file store's own line already names the fix (`authctl unlock`).
                break
            case (.unavailable, _), (.locked, _), (.timeout, _):
                error.advice = StoreMessages.unusable(kind, profile: profile, pinned: recorded, detail: error.message)
            }
            if kind == .secretService { throw error }
            throw AuthctlError.from(error)
        }
    }
}

/// A passphrase file (AUTHCTL_STORE_PASSPHRASE_FILE) that group or other can read: anyone who
/// can read it can open the store's files.
enum PassphraseFileExposure {
    static func of(_ origin: PassphraseOrigin) -> String? {
        guard case .file(let path) = origin else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & 0o044 != 0 else { return nil }
        return
            "the passphrase file \(UntrustedText(path)) can be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))): `chmod 600` it"
    }
}

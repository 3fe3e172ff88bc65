import Crypto
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `SecretStore` in passphrase-encrypted files, for hosts with neither a Secret Service nor a
/// usable kernel keyring (containers, CI runners).
///
/// - One file per profile, `<directory>/<profile>.age`, in the age format v1 with one scrypt
///   recipient: `age -d` opens it with the same passphrase, and a file `age -p` encrypted is read.
///   Its plaintext is a JSON document of the profile's items (`{"items":[...]}`).
/// - The directory is created 0700; an existing one that is not the user's, or that group or
///   other can enter, is refused. Files are 0600.
/// - Writes read, change and rewrite the whole file under an exclusive `flock` on
///   `<profile>.lock`, through a temporary file that is fsynced and renamed over the old one
///   (then the directory is fsynced): a file is never half-written, and concurrent writers of
///   different items lose nothing.
/// - A file that is damaged or truncated is refused (`.corrupted`) and a wrong passphrase too
///   (`.wrongPassphrase`); neither file is ever rewritten or removed.
/// - scrypt runs once per file per store: the file key is kept, and rewrites of the same file
///   keep its header (so the same file key) with a fresh random payload nonce, hence a fresh
///   payload key. age's spec asks for a new file key per file; keeping it across rewrites of one
///   file saves ~0.5 s and 256 MiB per write and never repeats a key and nonce pair.
/// - Never prints, never exits, never puts the secret in an error message.
public final class AgeFileStore: SecretStore, Sendable {
    /// age's default work factor (scrypt N = 2^18), used for new files.
    public static let defaultWorkFactor = AgeFormat.defaultWorkFactor
    /// The largest work factor a file may ask for (age's own limit).
    public static let maximumWorkFactor = AgeFormat.maximumWorkFactor
    /// The largest file this store reads.
    static let maximumFileBytes = 16 << 20

    public let directory: String
    public let workFactor: Int
    private let source: PassphraseSource
    let agent: AgentUse?
    let observer: FileStoreObserver?
    let state = Mutex(State())

    struct State {
        var passphrase: [UInt8]?
        var origin: PassphraseOrigin?
        var directoryChecked = false
        var profiles: [String: Opened] = [:]
        /// What the last request to the key agent found, for the message when nothing opens a file.
        /// The header a new file of the directory takes, once opened with the passphrase.
        var directoryHeader: AgeFormat.Header?
        var agentAbsence: KeyAgentClient.Absence?
        var agentTrouble: String?
    }

    /// A file as last read or written by this store: `header` with its file key when this process
    /// unwrapped it, nil when the key agent opened the file (it keeps the key).
    struct Opened {
        var identity: FileIdentity
        var header: AgeFormat.Header?
        var headerBytes: [UInt8]
        var document: Document
    }

    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Int
        var modifiedNanoseconds: Int

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = Int(info.st_mtim.tv_sec)
            modifiedNanoseconds = Int(info.st_mtim.tv_nsec)
        }
    }

    struct Document: Codable, Equatable {
        var items: [StoredItem]
    }

    /// - Parameters:
    ///   - directory: where the files are (the CLI passes `$XDG_STATE_HOME/authctl`, by default
    ///     `~/.local/state/authctl`); created 0700 on the first write.
    ///   - passphrase: resolved the first time a file must be opened or created.
    ///   - workFactor: log2 of scrypt's N for new files. Lower than the default only in unit tests.
    ///   - agent: the key agent to ask before the passphrase (nil: never ask one).
    ///   - observer: told what was asked of the agent and what it answered (`--debug`).
    public init(
        directory: String, passphrase: PassphraseSource, workFactor: Int = AgeFileStore.defaultWorkFactor,
        agent: AgentUse? = nil, observer: FileStoreObserver? = nil
    ) {
        self.observer = observer
        self.directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        self.source = passphrase
        self.agent = agent
        self.workFactor = min(max(workFactor, 1), AgeFormat.maximumWorkFactor)
    }

    /// The file of `profile`.
    public func path(profile: String) -> String {
        directory + "/" + Self.fileName(profile) + ".age"
    }

    /// Where the passphrase came from, once a file has been opened or created.
    public var passphraseOrigin: PassphraseOrigin? {
        state.withLock { $0.origin }
    }

    public func read(_ key: SecretKey) throws -> String? {
        try state.withLock { state in
            guard let opened = try current(profile: key.profile, state: &state) else { return nil }
            return opened.document.items.first { $0.kind == key.kind }?.secret(for: key)
        }
    }

    public func keys(profile: String) throws -> [SecretKey] {
        try state.withLock { state in
            guard let opened = try current(profile: profile, state: &state) else { return [] }
            return opened.document.items.map(\.key).sorted { $0.kind < $1.kind }
        }
    }

    public func write(_ key: SecretKey, label: String, secret: String) throws {
        _ = try update(profile: key.profile) { items in
            let item = StoredItem(key: key, label: label, secret: secret)
            if let index = items.firstIndex(where: { $0.kind == key.kind }) {
                items[index] = item
            } else {
                items.append(item)
                items.sort { $0.kind < $1.kind }
            }
            return true
        }
    }

    /// The directory safe (created 0700 if missing), a passphrase from its source, and the
    /// profile's file, if any, opened with it: a read alone asks for no passphrase when there is
    /// no file yet, and a write would then fail only after the service answered.
    public func prepareToKeep(profile: String) throws {
        try state.withLock { state in
            try checkDirectory(&state)
            if try current(profile: profile, state: &state) == nil, try !agentHoldsDirectoryHeader(state: &state) {
                // A new file takes the directory's passphrase: checked now, before the service is asked.
                state.directoryHeader = try localHeader(for: nil, profile: profile, state: &state)
            }
        }
    }

    @discardableResult
    public func delete(_ key: SecretKey) throws -> Bool {
        try update(profile: key.profile) { items in
            guard let index = items.firstIndex(where: { $0.kind == key.kind }) else { return false }
            items.remove(at: index)
            return true
        }
    }

    /// `profile`'s file with no items, sealed with `header`, where the directory has no file yet
    /// (`unlock` in an empty directory). Returns its path.
    func writeFirstFile(profile: String, header: AgeFormat.Header, state: inout State) throws -> String {
        try checkDirectory(&state, creating: true)
        let lock = try Self.lock(directory + "/" + Self.fileName(profile) + ".lock")
        defer { close(lock) }
        let path = path(profile: profile)
        let document = Document(items: [])
        let identity = try replace(
            path, with: AgeFormat.encrypt(Array(try StoredItem.encoder().encode(document)), header: header))
        state.profiles[profile] = Opened(
            identity: identity, header: header, headerBytes: header.bytes, document: document)
        state.directoryHeader = header
        return path
    }

    /// How `profile`'s file stands among the directory's files, read without a passphrase (what
    /// `status` may say about whose passphrase opens it).
    public enum PassphraseStanding: Sendable, Equatable {
        /// No file yet.
        case noFile
        /// The only file of the directory.
        case alone
        /// Its header is the one every other file of the directory carries.
        case sharedWithEveryFile
        /// Another file of the directory carries another header: another passphrase opens it.
        case differsFromOthers
    }

    public func passphraseStanding(profile: String) throws -> PassphraseStanding {
        try state.withLock { state in
            guard try checkDirectory(&state, creating: false) else { return .noFile }
            let path = path(profile: profile)
            let groups = try directoryHeaders()
            guard let own = groups.firstIndex(where: { $0.paths.contains(path) }) else { return .noFile }
            if groups.count > 1 { return .differsFromOthers }
            return groups[own].paths.count == 1 ? .alone : .sharedWithEveryFile
        }
    }

    // MARK: - Reading

    /// The profile's file as it is now: the cached copy when the file has not changed since,
    /// nil when there is no file.
    private func current(profile: String, state: inout State) throws -> Opened? {
        let path = path(profile: profile)
        // A file is read only from a directory, and as a file, that no one else could have put
        // there, as for writes.
        guard try checkDirectory(&state, creating: false), let (fd, identity) = try Self.openForReading(path) else {
            state.profiles[profile] = nil
            return nil
        }
        defer { close(fd) }
        if let cached = state.profiles[profile], cached.identity == identity { return cached }
        let bytes = try Self.readAll(fd, path: path)
        defer { _ = bytes }
        let opened = try decrypt(bytes, path: path, identity: identity, profile: profile, state: &state)
        state.profiles[profile] = opened
        return opened
    }

    private func decrypt(
        _ file: [UInt8], path: String, identity: FileIdentity, profile: String,
        state: inout State
    ) throws -> Opened {
        do {
            var header: AgeFormat.Header?
            let start: Int
            var plaintext: [UInt8]
            if let cached = state.profiles[profile]?.header, let known = try AgeFormat.reopenHeader(file, known: cached)
            {
                (header, start) = known
                plaintext = try AgeFormat.decryptPayload(file, from: start, header: known.0)
            } else {
                // Parse first, so a damaged file is reported as such without asking for a passphrase.
                let parsed = try AgeFormat.parseHeader(file)
                if let opened = try agentOpen(file, path: path, state: &state) {
                    start = parsed.end
                    plaintext = opened
                } else {
                    let known = try AgeFormat.openHeader(file, passphrase: try passphrase(&state))
                    (header, start) = known
                    feedAgentAfterPrompt(known.0, profile: profile, state: state)
                    plaintext = try AgeFormat.decryptPayload(file, from: start, header: known.0)
                }
            }
            defer { plaintext.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            guard let document = try? JSONDecoder().decode(Document.self, from: Data(plaintext)) else {
                throw SecureStoreError(
                    .corrupted,
                    message:
                        "\(path) opens but does not hold authctl items (not the JSON document this store writes); "
                        + "it was left untouched")
            }
            guard document.items.allSatisfy({ $0.profile == profile }) else {
                throw SecureStoreError(
                    .corrupted, message: "\(path) holds items of another profile; it was left untouched")
            }
            return Opened(identity: identity, header: header, headerBytes: Array(file[0..<start]), document: document)
        } catch AgeFormat.Failure.wrongPassphrase {
            throw wrongPassphrase(path, state: state)
        } catch AgeFormat.Failure.malformed(let reason) {
            throw Self.damaged(path, reason)
        } catch let error as CryptoKitError {
            throw SecureStoreError(kind: .failed, message: "scrypt failed on \(path) (\(error)); is memory short?")
        }
    }

    func wrongPassphrase(_ path: String, state: State) -> SecureStoreError {
        let origin = state.origin.map { " (from \($0))" } ?? ""
        return SecureStoreError(
            .wrongPassphrase,
            message:
                "the passphrase\(origin) does not open \(path); the file was left untouched")
    }

    static func damaged(_ path: String, _ reason: String) -> SecureStoreError {
        SecureStoreError(
            .corrupted,
            message:
                "\(path) is damaged or not an authctl store file: \(reason); it was left untouched "
                + "(move it away to start afresh, or inspect it with `age -d`)")
    }

    func passphrase(_ state: inout State) throws -> [UInt8] {
        if let passphrase = state.passphrase { return passphrase }
        let text: String
        let origin: PassphraseOrigin
        do {
            (text, origin) = try source.passphrase()
        } catch let error as SecureStoreError where error.cause == .noPassphrase && agent != nil {
            // Files to open (or an agent that held them): locked, and `authctl unlock` is the fix.
            // A first file with no passphrase source is the plain missing passphrase.
            guard
                state.agentAbsence == .gone || state.agentTrouble != nil
                    || (try? directoryHeaders())?.isEmpty != true
            else {
                throw error
            }
            throw SecureStoreError(.storeLocked, message: lockedMessage(state))
        }
        state.passphrase = Array(text.utf8)
        state.origin = origin
        return state.passphrase!
    }

    // MARK: - Writing

    /// Read, change, write under the profile's lock. `change` returns whether it changed
    /// anything, and so does `update`.
    private func update(profile: String, _ change: (inout [StoredItem]) -> Bool) throws -> Bool {
        try state.withLock { state in
            try checkDirectory(&state, creating: true)
            let lock = try Self.lock(directory + "/" + Self.fileName(profile) + ".lock")
            defer { close(lock) }  // closing the descriptor releases the flock
            removeStaleTemporaries(profile: profile)
            let before = try current(profile: profile, state: &state)
            var items = before?.document.items ?? []
            guard change(&items) else { return false }
            let path = path(profile: profile)
            if items.isEmpty {
                guard unlink(path) == 0 || errno == ENOENT else { throw fileError("cannot remove", path) }
                try syncDirectory()
                state.profiles[profile] = nil
                return true
            }
            let document = Document(items: items)
            var plaintext = Array(try StoredItem.encoder().encode(document))
            defer { plaintext.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            let file: [UInt8]
            var header = before?.header
            // A file wrapped more weakly than this store writes (age -p at a low work factor, an old
            // file) is re-keyed at the store's work factor, here rather than by the agent.
            let weakBefore =
                try before.map { try AgeFormat.parseHeader($0.headerBytes).workFactor < workFactor } ?? false
            // A new file takes the header the directory's files carry, read here from the files.
            if header == nil, !weakBefore, let sealHeader = try before?.headerBytes ?? directoryHeader(),
                let sealed = try agentSeal(plaintext, header: sealHeader, state: &state)
            {
                file = sealed
            } else {
                if header == nil {
                    header =
                        try before == nil
                        ? state.directoryHeader ?? localHeader(for: nil, profile: profile, state: &state)
                        : localHeader(for: before, profile: profile, state: &state)
                    if before == nil { state.directoryHeader = header }
                }
                if let weak = header, weak.workFactor < workFactor {
                    header = try AgeFormat.newHeader(passphrase: passphrase(&state), workFactor: workFactor)
                    if before == nil { state.directoryHeader = header }
                }
                file = try AgeFormat.encrypt(plaintext, header: header!)
            }
            let headerBytes = try header?.bytes ?? Array(file[0..<AgeFormat.parseHeader(file).end])
            let identity = try replace(path, with: file)
            state.profiles[profile] = Opened(
                identity: identity, header: header, headerBytes: headerBytes, document: document)
            return true
        }
    }

    /// Writes `bytes` to a temporary file next to `path`, fsyncs it and renames it over `path`,
    /// then fsyncs the directory. Returns the new file's identity.
    func replace(_ path: String, with bytes: [UInt8]) throws -> FileIdentity {
        let temporary = path + ".tmp-\(getpid())-\(AgeFormat.base64(AgeFormat.randomBytes(6)).replacingSlashes)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw fileError("cannot create", temporary) }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        do {
            defer { close(fd) }
            var written = 0
            while written < bytes.count {
                let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { throw fileError("cannot write", temporary) }
                written += count
            }
            guard fsync(fd) == 0 else { throw fileError("cannot sync", temporary) }
        }
        guard rename(temporary, path) == 0 else { throw fileError("cannot rename to", path) }
        renamed = true
        try syncDirectory()
        let check = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard check >= 0 else { throw fileError("cannot open", path) }
        defer { close(check) }
        return try Self.identity(check, path: path)
    }

    private func syncDirectory() throws {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw fileError("cannot open", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw fileError("cannot sync", directory) }
    }

    /// Creates the directory (and missing parents) 0700, or checks that the existing one is the
    /// user's and closed to group and other.
    func checkDirectory(_ state: inout State) throws {
        try checkDirectory(&state, creating: true)
    }

    /// As `checkDirectory`, creating it only when `creating`. False: there is none (not creating).
    @discardableResult
    func checkDirectory(_ state: inout State, creating: Bool) throws -> Bool {
        if state.directoryChecked { return true }
        var info = stat()
        if stat(directory, &info) != 0 {
            guard errno == ENOENT else { throw fileError("cannot inspect", directory) }
            guard creating else { return false }
            try Self.makeDirectories(directory)
            guard stat(directory, &info) == 0 else { throw fileError("cannot inspect", directory) }
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw SecureStoreError(
                .insecure, message: "\(directory) is not a directory; the file store keeps its files there")
        }
        try PrivatePath.requireOwnAndClosed(info, path: directory, refuser: "the file store", mode: "700")
        state.directoryChecked = true
        return true
    }

    /// Opens a file of the directory for reading, as every read of the store opens one (its
    /// profile's file, the directory's other files for their shared header, `unlock`, `status`,
    /// the check after a migration): never through a link (O_NOFOLLOW) nor blocking on a FIFO
    /// (O_NONBLOCK); a regular file of this user that group and other cannot reach, of at most
    /// `maximumFileBytes` (a file planted by someone else is refused, not
    /// read). nil when there is none. The caller closes the descriptor.
    static func openForReading(_ path: String) throws -> (fd: Int32, identity: FileIdentity)? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return nil
            case ELOOP:
                throw SecureStoreError(
                    .insecure,
                    message: "\(path) is a symbolic link; the file store reads no file through a link: remove it")
            default:
                throw SecureStoreError(
                    kind: .failed, message: "cannot open \(path): \(String(cString: strerror(errno)))")
            }
        }
        do {
            let info = try regularFile(fd, path: path)
            try PrivatePath.requireOwnAndClosed(info, path: path, refuser: "the file store", mode: "600")
            guard info.st_size <= maximumFileBytes else { throw tooLarge(path) }
            return (fd, FileIdentity(info))
        } catch {
            close(fd)
            throw error
        }
    }

    /// The whole file, opened as `openForReading` opens it; nil when there is none.
    static func readChecked(_ path: String) throws -> [UInt8]? {
        guard let (fd, _) = try openForReading(path) else { return nil }
        defer { close(fd) }
        return try readAll(fd, path: path)
    }

    /// Temporary files of `profile` left by a writer killed mid-write: under the profile's lock no
    /// other writer has one in flight, so every one there is stale.
    private func removeStaleTemporaries(profile: String) {
        let prefix = Self.fileName(profile) + ".age.tmp-"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in entries where name.hasPrefix(prefix) { unlink(directory + "/" + name) }
    }

    private static func makeDirectories(_ path: String) throws {
        let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        var info = stat()
        if !parent.isEmpty && stat(parent, &info) != 0 && errno == ENOENT { try makeDirectories(parent) }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw SecureStoreError(
                kind: .unavailable,
                message:
                    "cannot create \(path): \(String(cString: strerror(errno)))")
        }
    }

    static func lock(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw SecureStoreError(
                kind: .failed, message: "cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        while flock(fd, LOCK_EX) != 0 {
            if errno == EINTR { continue }
            let reason = String(cString: strerror(errno))
            close(fd)
            throw SecureStoreError(kind: .failed, message: "cannot lock \(path): \(reason)")
        }
        return fd
    }

    // MARK: - Files

    static func identity(_ fd: Int32, path: String) throws -> FileIdentity {
        FileIdentity(try regularFile(fd, path: path))
    }

    /// The file's status, when it is a regular file.
    private static func regularFile(_ fd: Int32, path: String) throws -> stat {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SecureStoreError(
                kind: .failed, message: "cannot inspect \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw SecureStoreError(.corrupted, message: "\(path) is not a regular file; it was left untouched")
        }
        return info
    }

    static func readAll(_ fd: Int32, path: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else {
                throw SecureStoreError(
                    kind: .failed, message: "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
            guard bytes.count <= maximumFileBytes else { throw tooLarge(path) }
        }
    }

    private static func tooLarge(_ path: String) -> SecureStoreError {
        SecureStoreError(.corrupted, message: "\(path) is larger than \(maximumFileBytes) bytes; it was left untouched")
    }

    private func fileError(_ what: String, _ path: String) -> SecureStoreError {
        SecureStoreError(kind: .failed, message: "\(what) \(path): \(String(cString: strerror(errno)))")
    }

    /// The profile's name as a file name: letters, digits, `-`, `_` and inner `.` kept, every
    /// other byte percent-escaped (so no name can climb out of the directory or collide).
    static func fileName(_ profile: String) -> String {
        var out = ""
        for (index, byte) in profile.utf8.enumerated() {
            let plain =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || (byte == UInt8(ascii: ".") && index > 0)
            out +=
                plain
                ? String(Unicode.Scalar(byte)) : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
        return out.isEmpty ? "%" : out
    }

    /// The profile whose file `path` is (`fileName` undone); nil for a name `fileName` does not make.
    public static func profile(ofFile path: String) -> String? {
        guard let name = path.split(separator: "/").last, name.hasSuffix(".age") else { return nil }
        let escaped = Array(name.dropLast(4).utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index < escaped.count {
            if escaped[index] == UInt8(ascii: "%"), index + 2 < escaped.count,
                let byte = UInt8(String(decoding: escaped[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
            {
                bytes.append(byte)
                index += 3
            } else {
                bytes.append(escaped[index])
                index += 1
            }
        }
        guard let profile = String(validating: bytes, as: UTF8.self), fileName(profile) == name.dropLast(4) else {
            return nil
        }
        return profile
    }
}

extension String {
    /// base64 without `/` (for a file name).
    fileprivate var replacingSlashes: String {
        String(map { $0 == "/" ? "_" : $0 })
    }
}

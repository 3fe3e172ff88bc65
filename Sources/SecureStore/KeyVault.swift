import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What the key agent holds: per store directory, the file keys of the age headers it was given,
/// in one page of memory that is locked (`mlock`: never swapped), left out of core dumps
/// (`MADV_DONTDUMP`) and zeroed when a key is forgotten. It opens and seals files itself: a file
/// key never leaves it once given (as ssh-agent signs instead of handing out keys).
///
/// Files of one directory share one header (one file key, wrapped once with the directory's
/// passphrase): a new file takes the directory's header, so the agent can create it without the
/// passphrase while `age -d` still opens it with the passphrase. Each file's payload has its own
/// random 16-byte nonce, hence its own payload key (docs/security.md, "The key agent").
public final class KeyVault {
    public static let slotBytes = 16
    /// One page: 256 file keys, far more than one user's store directories hold.
    static let pageBytes = 4096

    struct Held {
        var header: [UInt8]
        var fingerprint: [UInt8]
        var slot: Int
    }

    struct Directory {
        var held: [Held]
        var deadline: UInt64
        var idle: UInt64
        var lastUsed: UInt64
        var expiresAt: UInt64 { min(deadline, lastUsed &+ idle) }
    }

    private let page: UnsafeMutableRawPointer
    /// Whether `mlock` succeeded (RLIMIT_MEMLOCK allows one page for every user by default).
    public let memoryLocked: Bool
    private var free: [Int]
    private var directories: [String: Directory] = [:]
    public private(set) var answers: UInt64 = 0

    public init() throws {
        guard let mapped = mmap(nil, Self.pageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            mapped != MAP_FAILED
        else {
            throw SecureStoreError(
                kind: .failed, message: "cannot map the agent's key page: \(String(cString: strerror(errno)))")
        }
        page = mapped
        memoryLocked = mlock(mapped, Self.pageBytes) == 0
        _ = madvise(mapped, Self.pageBytes, 16)  // MADV_DONTDUMP
        free = Array((0..<(Self.pageBytes / Self.slotBytes)).reversed())
    }

    deinit {
        forgetAll()
        munlock(page, Self.pageBytes)
        munmap(page, Self.pageBytes)
    }

    public var isEmpty: Bool { directories.isEmpty }

    /// The earliest expiry of what it holds (seconds since 1970), nil when it holds nothing.
    public var nextExpiry: UInt64? { directories.values.map(\.expiresAt).min() }

    /// Keeps `fileKey` for `header` of `directory`, after checking the header's MAC with it (a
    /// key that does not open its header is refused). The directory's lifetime restarts. The key
    /// is read where it lies (the agent's locked receive buffer) and copied only into the page.
    public func add(
        directory: String, header: [UInt8], fileKey: UnsafeRawBufferPointer, lifetime: UInt64, idle: UInt64,
        now: UInt64
    ) throws {
        expire(now: now)
        guard fileKey.count == Self.slotBytes else { throw Refusal("a file key is 16 bytes") }
        let parsed: AgeFormat.ParsedHeader
        do { parsed = try AgeFormat.parseHeader(header) } catch {
            throw Refusal("the header is not an age scrypt header")
        }
        guard parsed.end == header.count else { throw Refusal("the header has bytes after its MAC line") }
        guard
            HMAC<SHA256>.isValidAuthenticationCode(
                parsed.mac, authenticating: Array(header[parsed.macInput]),
                using: AgeFormat.macKey(fileKey: SymmetricKey(data: fileKey)))
        else {
            throw Refusal("the file key does not open the header")
        }
        var entry = directories[directory] ?? Directory(held: [], deadline: 0, idle: 0, lastUsed: 0)
        if !entry.held.contains(where: { $0.header == header }) {
            guard let slot = free.popLast() else { throw Refusal("the agent holds as many keys as it can") }
            (page + slot * Self.slotBytes).copyMemory(from: fileKey.baseAddress!, byteCount: Self.slotBytes)
            entry.held.append(Held(header: header, fingerprint: Array(SHA256.hash(data: header)), slot: slot))
        }
        entry.deadline = now &+ lifetime
        entry.idle = idle
        entry.lastUsed = now
        directories[directory] = entry
        answers += 1
    }

    /// The array form (tests).
    func add(directory: String, header: [UInt8], fileKey: [UInt8], lifetime: UInt64, idle: UInt64, now: UInt64)
        throws
    {
        try fileKey.withUnsafeBytes {
            try add(directory: directory, header: header, fileKey: $0, lifetime: lifetime, idle: idle, now: now)
        }
    }

    /// The plaintext of an age `file` of `directory`, in locked memory wiped when released; nil
    /// when no held key opens its header, or the directory's time ran out (checked here, at use,
    /// not only between requests).
    func open(directory: String, file: UnsafeRawBufferPointer, now: UInt64) throws -> LockedBuffer? {
        guard let (entry, held) = try heldHeader(directory: directory, file: file, now: now) else { return nil }
        defer { used(directory, entry, now: now) }
        let header = AgeFormat.Header(bytes: held.header, fileKey: key(held.slot), workFactor: 0)
        guard let size = AgeFormat.plaintextSize(payloadBytes: file.count - held.header.count) else {
            throw Refusal("the payload is truncated")
        }
        let plaintext = try LockedBuffer(capacity: size)
        do {
            try AgeFormat.decryptPayload(file, from: held.header.count, header: header) { chunk in
                plaintext.take(&chunk)
            }
        } catch AgeFormat.Failure.malformed(let reason) {
            throw Refusal(reason)
        }
        return plaintext
    }

    /// The array form (tests).
    func open(directory: String, file: [UInt8], now: UInt64) throws -> [UInt8]? {
        try file.withUnsafeBytes { try open(directory: directory, file: $0, now: now) }.map { Array($0.bytes) }
    }

    /// `plaintext` sealed as a whole age file with `header`; nil when the agent holds no key for
    /// it or the directory's time ran out. The caller names the header (the file's own, or the one
    /// the directory's files carry): the agent never picks one for a new file.
    public func seal(directory: String, header: [UInt8], plaintext: UnsafeRawBufferPointer, now: UInt64) throws
        -> [UInt8]?
    {
        expire(now: now)
        guard let entry = directories[directory], let held = entry.held.first(where: { $0.header == header }) else {
            return nil
        }
        defer { used(directory, entry, now: now) }
        return try AgeFormat.encrypt(
            plaintext, header: AgeFormat.Header(bytes: held.header, fileKey: key(held.slot), workFactor: 0))
    }

    /// The array form (tests).
    func seal(directory: String, header: [UInt8], plaintext: [UInt8], now: UInt64) throws -> [UInt8]? {
        try plaintext.withUnsafeBytes { try seal(directory: directory, header: header, plaintext: $0, now: now) }
    }

    public func status(now: UInt64) -> AgentStatus {
        expire(now: now)
        answers += 1
        return AgentStatus(
            answers: answers,
            directories: directories.sorted { $0.key < $1.key }.map {
                AgentStatus.Directory(
                    path: $0.key, expiresAt: $0.value.expiresAt, fingerprints: $0.value.held.map(\.fingerprint))
            })
    }

    /// Forgets the directories whose idle time or lifetime has run out.
    public func expire(now: UInt64) {
        for (path, entry) in directories where entry.expiresAt <= now { forget(path) }
    }

    /// Forgets every key (zeroing its slot).
    public func forgetAll() {
        for path in Array(directories.keys) { forget(path) }
    }

    private func forget(_ path: String) {
        guard let entry = directories.removeValue(forKey: path) else { return }
        for held in entry.held {
            memset(page + held.slot * Self.slotBytes, 0, Self.slotBytes)
            free.append(held.slot)
        }
    }

    private func heldHeader(directory: String, file: UnsafeRawBufferPointer, now: UInt64) throws -> (Directory, Held)? {
        expire(now: now)
        guard let entry = directories[directory] else { return nil }
        return entry.held.first { file.count >= $0.header.count && file[0..<$0.header.count].elementsEqual($0.header) }
            .map { (entry, $0) }
    }

    private func used(_ path: String, _ entry: Directory, now: UInt64) {
        directories[path]?.lastUsed = now
        answers += 1
    }

    private func key(_ slot: Int) -> SymmetricKey {
        SymmetricKey(data: UnsafeRawBufferPointer(start: page + slot * Self.slotBytes, count: Self.slotBytes))
    }

    /// A request the agent understood and refuses; its reason goes back to the client.
    public struct Refusal: Error {
        public var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

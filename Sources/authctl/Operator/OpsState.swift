import CognitoClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What a bulk ops run has done so far, kept under `$XDG_STATE_HOME/authctl/ops/` and keyed by
/// pool, action and selection: the page being worked on and how many of its users are done, the
/// counts, and how long the audit log was after the last user recorded in it.
struct OpsCheckpoint: Codable, Equatable {
    var version = 1
    var userPoolId: String
    var action: String
    var selection: String
    /// Users selected, as counted before the first run (nil: not counted).
    var total: Int?
    var cursor = PageCursor()
    var doneInPage = 0
    var counts = OpsCounts()
    var auditLog: String
    /// The audit log's size after the last user this checkpoint counts.
    var auditOffset: Int64 = 0
    var complete = false
    /// Seconds spent acting in earlier runs.
    var elapsed: Double = 0
    var startedAt: Date
    var updatedAt: Date
}

/// Outcomes so far.
struct OpsCounts: Codable, Equatable {
    var done = 0
    var signedOut = 0
    var disabled = 0
    var notFound = 0
    var failed = 0

    /// An earlier run's counts after `retry`, a run over its failed users: those that no longer
    /// fail leave `failed` for their new outcome (each was already counted in `done`).
    mutating func absorb(retry: OpsCounts) {
        failed -= retry.done - retry.failed
        signedOut += retry.signedOut
        disabled += retry.disabled
        notFound += retry.notFound
    }

    mutating func add(_ result: OpsResult) {
        done += 1
        switch result {
        case .signedOut: signedOut += 1
        case .disabled: signedOut += 1; disabled += 1
        case .notFound: notFound += 1
        case .failed: failed += 1
        }
    }
}

/// One user's outcome, as the audit log writes it.
enum OpsResult: Equatable {
    case signedOut
    /// Signed out and disabled.
    case disabled
    case notFound
    case failed(code: String)

    var name: String {
        switch self {
        case .signedOut: return "signedOut"
        case .disabled: return "disabled"
        case .notFound: return "notFound"
        case .failed: return "failed"
        }
    }

    init?(name: String, code: String?) {
        switch name {
        case "signedOut": self = .signedOut
        case "disabled": self = .disabled
        case "notFound": self = .notFound
        case "failed": self = .failed(code: code ?? "")
        default: return nil
        }
    }
}

/// The ops state directory and its files: checkpoints written atomically (a temporary file,
/// fsync, rename, fsync of the directory), so a crash leaves the old one or the new one.
struct OpsStateDirectory {
    let directory: PrivateDirectory

    static func path(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/authctl/ops" }
        return Paths.home(environment) + "/.local/state/authctl/ops"
    }

    static func open(environment: [String: String]) throws -> OpsStateDirectory {
        OpsStateDirectory(directory: try PrivateDirectory.first(of: [path(environment: environment)], for: "the ops checkpoints"))
    }

    /// The file name stem for a run: pool, action and a digest of the selection.
    static func stem(poolId: String, action: OpsAction, selection: UserSelection) -> String {
        let safePool = String(poolId.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        return "\(safePool).\(action.rawValue).\(Digest.hex(selection.key))"
    }

    func checkpointPath(_ stem: String) -> String { directory.path + "/" + stem + ".checkpoint.json" }
    func auditPath(_ stem: String) -> String { directory.path + "/" + stem + ".audit.jsonl" }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    func load(_ stem: String) throws -> OpsCheckpoint? {
        let fd = openat(directory.descriptor, stem + ".checkpoint.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw AuthctlError(.configuration, "cannot read the checkpoint \(checkpointPath(stem)): \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
            if data.count > 1 << 20 { break }
        }
        do {
            return try Self.decoder.decode(OpsCheckpoint.self, from: data)
        } catch {
            throw AuthctlError(.configuration, "the checkpoint \(checkpointPath(stem)) is unreadable (\(error)); run with --restart to start over")
        }
    }

    func save(_ checkpoint: OpsCheckpoint, _ stem: String) throws {
        let data = try Self.encoder.encode(checkpoint)
        let name = stem + ".checkpoint.json"
        let temporary = name + ".tmp"
        unlinkat(directory.descriptor, temporary, 0)
        let fd = try directory.openFile(temporary, flags: O_WRONLY | O_CREAT | O_EXCL)
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd)
        Glibc.close(fd)
        guard written == data.count, synced == 0, renameat(directory.descriptor, temporary, directory.descriptor, name) == 0 else {
            let reason = String(cString: strerror(errno))
            unlinkat(directory.descriptor, temporary, 0)
            throw AuthctlError(.configuration, "cannot write the checkpoint \(checkpointPath(stem)): \(reason)")
        }
        fsync(directory.descriptor)
    }

    func remove(_ stem: String) {
        unlinkat(directory.descriptor, stem + ".checkpoint.json", 0)
    }
}

/// FNV-1a, 64 bits, in hex: names a selection's files (not a security measure).
enum Digest {
    static func hex(_ text: String) -> String {
        var hasher = Hasher64()
        hasher.add(Array(text.utf8))
        return hasher.hex
    }

    struct Hasher64 {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
        mutating func add(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                value ^= UInt64(byte)
                value = value &* 0x100_0000_01b3
            }
        }
        var hex: String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
    }
}

/// The audit log: one JSON line per user, appended and synced before the checkpoint counts the user.
final class OpsAuditLog {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw AuthctlError(.configuration, "cannot open the audit log \(OutsideText(path)): \(String(cString: strerror(errno)))")
        }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// The file's size now.
    var size: Int64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int64(info.st_size) : 0
    }

    struct Entry: Codable {
        var time: Date
        var pool: String
        var user: String
        var action: String
        var result: String
        var error: String?
        var requestId: String?
        var requestIds: [String]
        var `operator`: Operator

        struct Operator: Codable {
            var accessKeyId: String
            var local: String
        }
    }

    /// Appends `entry` as one line (one write) and syncs it; returns the size after it.
    func append(_ entry: Entry) throws -> Int64 {
        var data = try OpsStateDirectory.encoder.encode(entry)
        data.append(0x0a)
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(fd) == 0 else {
            throw AuthctlError(.configuration, "cannot write the audit log \(OutsideText(path)): \(String(cString: strerror(errno)))")
        }
        return size
    }

    /// The users whose latest entry of `pool` and `action` written since `since` is `failed`, in
    /// the order they first failed: what a rerun of a finished run tries again. The log is read a
    /// line at a time, so its size does not matter.
    static func failedUsers(path: String, pool: String, action: String, since: Date) -> [String] {
        guard let file = fopen(path, "r") else { return [] }
        defer { fclose(file) }
        var order: [String] = []
        var failing: [String: Bool] = [:]
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        while true {
            let length = getline(&buffer, &capacity, file)
            guard length > 0, let buffer else { break }
            let line = Data(bytes: buffer, count: length)
            guard let entry = try? OpsStateDirectory.decoder.decode(Entry.self, from: line),
                  entry.pool == pool, entry.action == action, entry.time >= since else { continue }
            let failed = entry.result == OpsResult.failed(code: "").name
            if failing[entry.user] == nil && failed { order.append(entry.user) }
            if failing[entry.user] != nil || failed { failing[entry.user] = failed }
        }
        return order.filter { failing[$0] == true }
    }

    /// The entries of `pool` and `action` after `offset` (written after the checkpoint was: at most
    /// the user a kill interrupted between the two writes), each with the offset of its end.
    static func entries(path: String, after offset: Int64, pool: String, action: String) -> [(user: String, result: OpsResult, end: Int64)] {
        guard let file = ReadableFile(path: path), file.seek(to: max(0, offset)),
              let data = file.readToEnd(limit: 1 << 20), data.count < 1 << 20 else { return [] }
        var found: [(user: String, result: OpsResult, end: Int64)] = []
        var end = offset
        for line in data.split(separator: 0x0a, omittingEmptySubsequences: false) {
            end += Int64(line.count) + 1
            guard let entry = try? OpsStateDirectory.decoder.decode(Entry.self, from: Data(line)),
                  entry.pool == pool, entry.action == action,
                  let result = OpsResult(name: entry.result, code: entry.error) else { continue }
            found.append((entry.user, result, min(end, offset + Int64(data.count))))
        }
        return found
    }
}

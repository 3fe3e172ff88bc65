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
package struct OpsCheckpoint: Codable, Equatable {
    package var version = 1
    package var userPoolId: String
    package var action: String
    package var selection: String
    /// Users selected, as counted before the first run (nil: not counted).
    package var total: Int?
    package var cursor = PageCursor()
    package var doneInPage = 0
    package var counts = OpsCounts()
    package var auditLog: String
    /// The audit log's size after the last user this checkpoint counts.
    package var auditOffset: Int64 = 0
    package var complete = false
    /// Seconds spent acting in earlier runs.
    package var elapsed: Double = 0
    package var startedAt: Date
    package var updatedAt: Date

    package init(
        version: Int = 1,
        userPoolId: String,
        action: String,
        selection: String,
        total: Int? = nil,
        cursor: PageCursor = PageCursor(),
        doneInPage: Int = 0,
        counts: OpsCounts = OpsCounts(),
        auditLog: String,
        auditOffset: Int64 = 0,
        complete: Bool = false,
        elapsed: Double = 0,
        startedAt: Date,
        updatedAt: Date
    ) {
        self.version = version
        self.userPoolId = userPoolId
        self.action = action
        self.selection = selection
        self.total = total
        self.cursor = cursor
        self.doneInPage = doneInPage
        self.counts = counts
        self.auditLog = auditLog
        self.auditOffset = auditOffset
        self.complete = complete
        self.elapsed = elapsed
        self.startedAt = startedAt
        self.updatedAt = updatedAt
    }
}

/// Outcomes so far.
package struct OpsCounts: Codable, Equatable {
    package var done = 0
    package var signedOut = 0
    package var disabled = 0
    package var notFound = 0
    package var failed = 0

    /// An earlier run's counts after `retry`, a run over its failed users: those that no longer
    /// fail leave `failed` for their new outcome (each was already counted in `done`).
    package mutating func absorb(retry: OpsCounts) {
        failed -= retry.done - retry.failed
        signedOut += retry.signedOut
        disabled += retry.disabled
        notFound += retry.notFound
    }

    package mutating func add(_ result: OpsResult) {
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
package enum OpsResult: Equatable {
    case signedOut
    /// Signed out and disabled.
    case disabled
    case notFound
    case failed(code: String)

    package var name: String {
        switch self {
        case .signedOut: return "signedOut"
        case .disabled: return "disabled"
        case .notFound: return "notFound"
        case .failed: return "failed"
        }
    }

    package init?(name: String, code: String?) {
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
package struct OpsStateDirectory {
    package let directory: PrivateDirectory

    package static func path(environment: [String: String]) -> String {
        if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") { return state + "/authctl/ops" }
        return Paths.home(environment) + "/.local/state/authctl/ops"
    }

    package static func open(environment: [String: String]) throws -> OpsStateDirectory {
        OpsStateDirectory(directory: try PrivateDirectory.first(of: [path(environment: environment)], for: "the ops checkpoints"))
    }

    /// The file name stem for a run: pool, action and a digest of the selection.
    package static func stem(poolId: String, action: OpsAction, selection: UserSelection) -> String {
        let safePool = String(poolId.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        return "\(safePool).\(action.rawValue).\(Digest.hex(selection.key))"
    }

    package func checkpointPath(_ stem: String) -> String { directory.path + "/" + stem + ".checkpoint.json" }
    package func auditPath(_ stem: String) -> String { directory.path + "/" + stem + ".audit.jsonl" }

    package static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    package static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    package func load(_ stem: String) throws -> OpsCheckpoint? {
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

    package func save(_ checkpoint: OpsCheckpoint, _ stem: String) throws {
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

    package func remove(_ stem: String) {
        unlinkat(directory.descriptor, stem + ".checkpoint.json", 0)
    }
}

/// FNV-1a, 64 bits, in hex: names a selection's files (not a security measure).
package enum Digest {
    package static func hex(_ text: String) -> String {
        var hasher = Hasher64()
        hasher.add(Array(text.utf8))
        return hasher.hex
    }

    package struct Hasher64 {
        package private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325
        package mutating func add(_ bytes: some Sequence<UInt8>) {
            for byte in bytes {
                value ^= UInt64(byte)
                value = value &* 0x100_0000_01b3
            }
        }
        package var hex: String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }

        package init(value: UInt64 = 0xcbf2_9ce4_8422_2325) {

            self.value = value

        }

    }
}

/// The audit log: one JSON line per user, appended and synced before the checkpoint counts the user.
package final class OpsAuditLog {
    package let path: String
    private let fd: Int32

    package init(path: String) throws {
        self.path = path
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw AuthctlError(.configuration, "cannot open the audit log \(OutsideText(path)): \(String(cString: strerror(errno)))")
        }
        self.fd = fd
    }

    deinit { Glibc.close(fd) }

    /// The file's size now.
    package var size: Int64 {
        var info = stat()
        return fstat(fd, &info) == 0 ? Int64(info.st_size) : 0
    }

    package struct Entry: Codable {
        package var time: Date
        package var pool: String
        package var user: String
        package var action: String
        package var result: String
        package var error: String?
        package var requestId: String?
        package var requestIds: [String]
        package var `operator`: Operator

        package struct Operator: Codable {
            package var accessKeyId: String
            package var local: String

            package init(accessKeyId: String, local: String) {
                self.accessKeyId = accessKeyId
                self.local = local
            }
        }
    }

    /// Appends `entry` as one line (one write) and syncs it; returns the size after it.
    package func append(_ entry: Entry) throws -> Int64 {
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
    package static func failedUsers(path: String, pool: String, action: String, since: Date) -> [String] {
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
    package static func entries(path: String, after offset: Int64, pool: String, action: String) -> [(user: String, result: OpsResult, end: Int64)] {
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

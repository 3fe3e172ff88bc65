import CognitoClient
import LocalFormats

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
/// counts, the users that failed, and the audit line of the last user counted. Everything a rerun
/// acts on comes from here (a private file), never from the audit log, which is a record for
/// people and may sit where others can read it.
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
    /// The users whose latest outcome is `failed`, in the order they failed: what a rerun of a
    /// finished run retries.
    package var failedUsers: [String]? = nil
    /// The audit line of the last user counted, and where in the log it goes: the checkpoint is
    /// written before the line, so a run killed between the two writes appends it on resume.
    package var lastLine: PendingLine? = nil
    /// For a multi-step action (contain): the steps done for each user not yet counted, so a rerun
    /// after a kill does only the steps left.
    package var stepsDone: [String: [String]]? = nil

    package struct PendingLine: Codable, Equatable {
        package var offset: Int64
        package var line: String

        package init(offset: Int64, line: String) {
            self.offset = offset
            self.line = line
        }
    }
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

    /// An earlier run's counts after `retry`, a run over its failed users, of whom `stillFailing`
    /// fail now: those that no longer fail leave `failed` for their new outcome (each was already
    /// counted in `done`). `failed` is the failed users' count, never below zero.
    package mutating func absorb(retry: OpsCounts, stillFailing: Int) {
        failed = stillFailing
        signedOut += retry.signedOut
        disabled += retry.disabled
        notFound += retry.notFound
    }

    package mutating func add(_ result: OpsResult) {
        done += 1
        switch result {
        case .signedOut: signedOut += 1
        case .disabled:
            signedOut += 1
            disabled += 1
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
        OpsStateDirectory(
            directory: try PrivateDirectory.first(of: [path(environment: environment)], for: "the ops checkpoints"))
    }

    /// The file name stem for a run: pool, action and a digest of the selection.
    package static func stem(poolId: String, action: OpsAction, selection: UserSelection) -> String {
        let safePool = String(poolId.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        return "\(safePool).\(action.rawValue).\(Digest.hex(selection.key))"
    }

    package func checkpointPath(_ stem: String) -> String { directory.path + "/" + stem + ".checkpoint.json" }
    package func auditPath(_ stem: String) -> String { directory.path + "/" + stem + ".audit.jsonl" }

    package static let encoder = LocalJSON.encoder
    package static let decoder = LocalJSON.decoder

    package func load(_ stem: String) throws -> OpsCheckpoint? {
        let fd = openat(directory.descriptor, stem + ".checkpoint.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw AuthctlError(
                .configuration,
                "cannot read the checkpoint \(checkpointPath(stem)): \(String(cString: strerror(errno)))")
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
            throw AuthctlError(
                .configuration,
                "the checkpoint \(checkpointPath(stem)) is unreadable (\(error)); run with --restart to start over")
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
        guard written == data.count, synced == 0,
            renameat(directory.descriptor, temporary, directory.descriptor, name) == 0
        else {
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

/// The audit log: one JSON line per user, for people. A rerun never reads it (the checkpoint
/// says what is done); it is refused when another user could write it.
package final class OpsAuditLog {
    package let path: String
    private let fd: Int32

    /// `naming` says what the file is in messages (the incident record is written the same way).
    package init(path: String, naming: String = "the audit log") throws {
        self.path = path
        self.naming = naming
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw AuthctlError(
                .configuration, "cannot open \(naming) \(UntrustedText(path)): \(String(cString: strerror(errno)))")
        }
        if let refusal = Self.refusal(fd, path: path) {
            Glibc.close(fd)
            throw AuthctlError(
                .configuration,
                "\(naming) \(UntrustedText(path)) \(refusal): refused, nothing was done; use a path only you can write (or the default, next to the checkpoint)"
            )
        }
        self.fd = fd
    }

    private let naming: String

    deinit { Glibc.close(fd) }

    /// Why the open log is not one only this user can write: the file another user's or writable
    /// by others, or its directory writable by others without the sticky bit (the file could be
    /// swapped). Nil when it is fine.
    package static func refusal(_ fd: Int32, path: String) -> String? {
        var file = stat()
        guard fstat(fd, &file) == 0, (file.st_mode & S_IFMT) == S_IFREG else { return "is not a regular file" }
        if file.st_uid != getuid() { return "belongs to another user (uid \(file.st_uid))" }
        if file.st_mode & 0o022 != 0 {
            return "can be written by other users (mode \(String(file.st_mode & 0o777, radix: 8)))"
        }
        var directory = stat()
        let parent = Paths.parent(of: path)
        guard stat(parent.isEmpty ? "." : parent, &directory) == 0 else {
            return "is in a directory that cannot be checked"
        }
        if directory.st_uid != getuid() && directory.st_uid != 0 { return "is in a directory of another user" }
        if directory.st_mode & 0o022 != 0 && directory.st_mode & UInt32(S_ISVTX) == 0 {
            return
                "is in a directory others can write (mode \(String(directory.st_mode & 0o777, radix: 8)), not sticky)"
        }
        return nil
    }

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
        /// A step's result in words (how many devices forgotten, why a step was not possible).
        package var detail: String? = nil
        /// The session a per-session action (`ops sessions revoke`) ended; nil for per-user actions.
        package var session: String? = nil

        package init(
            time: Date, pool: String, user: String, action: String, result: String, error: String? = nil,
            requestId: String? = nil, requestIds: [String], operator: Operator, detail: String? = nil,
            session: String? = nil
        ) {
            self.time = time
            self.pool = pool
            self.user = user
            self.action = action
            self.result = result
            self.error = error
            self.requestId = requestId
            self.requestIds = requestIds
            self.operator = `operator`
            self.detail = detail
            self.session = session
        }

        package struct Operator: Codable {
            package var accessKeyId: String
            /// The process's real user, from the password database (`user@host`).
            package var local: String
            /// SUDO_USER when set: said by the environment, so recorded as a claim.
            package var claimedSudoUser: String? = nil

            package init(accessKeyId: String, local: String, claimedSudoUser: String? = nil) {
                self.accessKeyId = accessKeyId
                self.local = local
                self.claimedSudoUser = claimedSudoUser
            }
        }
    }

    /// `entry` as one line of the log.
    package static func line(_ entry: Entry) throws -> String {
        String(decoding: try OpsStateDirectory.encoder.encode(entry), as: UTF8.self) + "\n"
    }

    /// Appends `line` (one write) and syncs it; returns the size after it.
    package func append(_ line: String) throws -> Int64 {
        let data = Array(line.utf8)
        let written = data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == data.count, fsync(fd) == 0 else {
            throw AuthctlError(
                .configuration, "cannot write \(naming) \(UntrustedText(path)): \(String(cString: strerror(errno)))")
        }
        return size
    }

    /// Appends `pending` unless the log holds it at its offset already (a run killed after the
    /// checkpoint counted a user and before its line was written). Reads only those bytes, and
    /// only to compare them with the checkpoint's own copy.
    package func complete(_ pending: OpsCheckpoint.PendingLine) throws -> Int64 {
        let expected = Array(pending.line.utf8)
        if let file = ReadableFile(path: path), file.seek(to: max(0, pending.offset)),
            let found = file.read(upTo: expected.count), Array(found) == expected
        {
            return size
        }
        return try append(pending.line)
    }
}

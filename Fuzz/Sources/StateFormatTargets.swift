import AuthctlCore
import Foundation
import SecureStore

/// Files authctl reads back that another process (or user) may have written: the file store's age
/// header, and the ops checkpoint and audit log. Besides "no crash", what parses is
/// written and read again to the same value.
enum StateFormatTargets {
    static let all: [String: @Sendable (Data) -> Void] = [
        "age-header": ageHeader,
        "ops-checkpoint": opsCheckpoint,
        "ops-audit": opsAudit,
    ]

    /// An age file: its header parsed strictly; a cheap one (work factor at most 2) opened with the
    /// seeds' passphrase, so the MAC check and the payload's STREAM chunks are reached too.
    static func ageHeader(_ data: Data) {
        let file = [UInt8](data)
        guard let (workFactor, start) = AgeFileHeader.inspect(file) else { return }
        precondition(
            (1...AgeFileStore.maximumWorkFactor).contains(workFactor), "a work factor outside the bound was accepted")
        precondition(start > 0 && start <= file.count, "the payload starts outside the file")
        if workFactor <= 2 { _ = AgeFileHeader.decrypt(file, passphrase: "fuzz") }
    }

    /// A checkpoint's JSON, decoded, encoded, decoded and encoded again: what authctl writes reads
    /// back to the same checkpoint. (Compared as written, as the audit lines are: dates are kept
    /// to the second, so a fraction in a file authctl did not write is dropped at the first write.)
    static func opsCheckpoint(_ data: Data) {
        guard let checkpoint = try? OpsStateDirectory.decoder.decode(OpsCheckpoint.self, from: data) else { return }
        let written = try! OpsStateDirectory.encoder.encode(checkpoint)
        let again = try! OpsStateDirectory.decoder.decode(OpsCheckpoint.self, from: written)
        precondition(
            try! OpsStateDirectory.encoder.encode(again) == written,
            "a checkpoint written from what was read reads back differently")
    }

    /// Audit log lines: each entry read is written as a line and read again to the same line.
    static func opsAudit(_ data: Data) {
        for line in data.split(separator: 0x0A) {
            guard let entry = try? OpsStateDirectory.decoder.decode(OpsAuditLog.Entry.self, from: Data(line)) else {
                continue
            }
            let written = try! OpsAuditLog.line(entry)
            precondition(
                written.hasSuffix("\n") && written.dropLast().allSatisfy { $0 != "\n" }, "an entry is not one line")
            let again = try! OpsStateDirectory.decoder.decode(OpsAuditLog.Entry.self, from: Data(written.utf8))
            precondition(try! OpsAuditLog.line(again) == written, "an audit line read back differs")
        }
    }
}

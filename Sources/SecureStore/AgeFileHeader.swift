#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What may be asked of an age file from outside the store: its header's shape without a
/// passphrase, and its payload with one. The `age-header` fuzz target (Fuzz/) reads hostile files
/// through it, the same parser the store reads every file with.
public enum AgeFileHeader {
    /// The scrypt work factor and where the payload starts; nil for anything but a header the
    /// store would accept (age v1, one scrypt stanza, work factor at most `AgeFileStore.maximumWorkFactor`).
    public static func inspect(_ file: [UInt8]) -> (workFactor: Int, payloadStart: Int)? {
        guard let parsed = try? AgeFormat.parseHeader(file) else { return nil }
        return (parsed.workFactor, parsed.end)
    }

    /// The payload of `file` opened with `passphrase`; nil when it does not open. Costs one scrypt
    /// at the file's work factor.
    public static func decrypt(_ file: [UInt8], passphrase: String) -> [UInt8]? {
        guard let (header, start) = try? AgeFormat.openHeader(file, passphrase: Array(passphrase.utf8)) else {
            return nil
        }
        return try? AgeFormat.decryptPayload(file, from: start, header: header)
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// The owner and mode every path the stores and the key agent trust must have: this user's, and
/// closed to group and other, so another local user can neither plant nor read what authctl keeps.
enum PrivatePath {
    /// - Parameters:
    ///   - refuser: who refuses, as the message says it ("the file store", "the key agent").
    ///   - mode: the mode the message's `chmod` suggests ("600" for a file, "700" for a directory).
    ///   - otherOwnerHint: what to do instead when another user owns the path (appended).
    static func requireOwnAndClosed(
        _ info: stat, path: String, refuser: String, mode: String, otherOwnerHint: String = ""
    ) throws {
        guard info.st_uid == geteuid() else {
            throw SecureStoreError(
                .insecure,
                message: "\(path) belongs to uid \(info.st_uid), not to this user (\(geteuid())); \(refuser) refuses it"
                    + otherOwnerHint)
        }
        guard info.st_mode & 0o077 == 0 else {
            throw SecureStoreError(
                .insecure,
                message: "\(path) is open to group or other (mode \(String(info.st_mode & 0o777, radix: 8))); "
                    + "\(refuser) refuses it: `chmod \(mode) \(path)`")
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Who runs an operator command on this machine, for audit records: the
/// process's real user from the password database, not $USER or $LOGNAME (anyone can set those,
/// and cron, systemd or a bare container set none). SUDO_USER, when present, is recorded beside it
/// as what it is: a claim made by the environment.
package struct LocalOperator {
    package let user: String
    package let host: String
    package let claimedSudoUser: String?

    package init(environment: [String: String]) {
        let uid = getuid()
        user = getpwuid(uid).flatMap { $0.pointee.pw_name.map { String(cString: $0) } } ?? "uid \(uid)"
        var name = [CChar](repeating: 0, count: 256)
        host = gethostname(&name, name.count) == 0 ? String(cString: name) : "unknown-host"
        // Usernames are short: a longer value is no sudo's, and is cut rather than recorded whole.
        claimedSudoUser = environment["SUDO_USER"].flatMap { $0.isEmpty ? nil : String($0.prefix(64)) }
    }

    /// For an audit line on stderr: `root` and, after the credentials' source, the claim.
    package var claimNote: String {
        claimedSudoUser.map { ", SUDO_USER=\(UntrustedText($0)) claimed" } ?? ""
    }
}

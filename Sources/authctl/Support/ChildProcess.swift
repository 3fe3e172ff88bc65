import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a program authctl starts (`exec`'s command, the browser) inherits, and what it must not.
enum ChildProcess {
    /// Secrets authctl may take from its environment, which no program it starts gets: the app
    /// client's secret and the file store's passphrase (`AUTHCTL_STORE_PASSPHRASE_FILE` is only
    /// a path and stays).
    static let secretVariables = ["AUTHCTL_CLIENT_SECRET", "AUTHCTL_STORE_PASSPHRASE"]

    /// The descriptors open now (those the caller handed down, before authctl opens its own).
    static func openDescriptors() -> Set<Int32> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) })
    }

    /// What exec would otherwise hand down: the Swift runtime ignores SIGPIPE (an ignored signal
    /// stays ignored across exec, so `authctl exec -- yes | head -1` would never end on SIGPIPE),
    /// and descriptors opened by libcurl and D-Bus (the live connection to Cognito among them).
    static func prepareForExec(keeping inherited: Set<Int32>) {
        signal(SIGPIPE, SIG_DFL)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigprocmask(SIG_SETMASK, &unblocked, nil)
        for fd in openDescriptors().subtracting(inherited) where fd > 2 {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}

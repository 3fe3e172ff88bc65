#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What a program authctl starts (`exec`'s command, the browser) inherits, and what it must not.
package enum ChildProcess {
    /// authctl's own secrets in the environment: never handed to a program it starts (`exec`
    /// sets back only the tokens asked for): the tokens, the app client's secret and the file
    /// store's passphrase (`AUTHCTL_STORE_PASSPHRASE_FILE` is only a path and stays).
    package static let authctlSecrets = [
        "AUTHCTL_ACCESS_TOKEN", "AUTHCTL_ID_TOKEN", "AUTHCTL_TOKEN", "AUTHCTL_CLIENT_SECRET",
        "AUTHCTL_STORE_PASSPHRASE",
    ]
    /// AWS credentials: `exec`'s command may be meant to use them, a web browser never is.
    package static let awsSecrets = [
        "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN",
    ]

    /// The browser's environment: the caller's, without any of the secrets above.
    package static func browserEnvironment(_ environment: [String: String]) -> [String: String] {
        environment.filter { !authctlSecrets.contains($0.key) && !awsSecrets.contains($0.key) }
    }

    /// The descriptors open now (those the caller handed down, before authctl opens its own).
    package static func openDescriptors() -> Set<Int32> {
        Set(((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap { Int32($0) })
    }

    /// What exec would otherwise hand down: the Swift runtime ignores SIGPIPE (an ignored signal
    /// stays ignored across exec, so `authctl exec -- yes | head -1` would never end on SIGPIPE),
    /// and descriptors opened by libcurl and D-Bus (the live connection to Cognito among them).
    package static func prepareForExec(keeping inherited: Set<Int32>) {
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

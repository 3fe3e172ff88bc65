import Synchronization

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

    /// What exec would otherwise hand down: authctl ignores SIGPIPE (an ignored signal
    /// stays ignored across exec, so `authctl exec -- yes | head -1` would never end on SIGPIPE),
    /// and descriptors opened by libcurl and D-Bus (the live connection to Cognito among them).
    package static func prepareForExec(keeping inherited: Set<Int32>) {
        signal(SIGPIPE, SIG_DFL)
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        sigprocmask(SIG_SETMASK, &unblocked, nil)
        prepareDescriptors(keeping: inherited)
    }

    /// Every descriptor but those handed down (and 0, 1, 2) is closed in a program started from here.
    package static func prepareDescriptors(keeping inherited: Set<Int32>) {
        for fd in openDescriptors().subtracting(inherited) where fd > 2 {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
    }
}

/// `exec --serve`'s command: a child authctl waits for (it keeps serving meanwhile), with the
/// termination signals passed on to it and its end passed on by the caller.
package enum ServedChild {
    /// How the child ended.
    package enum End: Equatable, Sendable {
        case exited(Int32)
        case signaled(Int32)
    }

    /// The signals a wrapper passes on: a terminal's Ctrl-C, Ctrl-\ and hang-up already reach the
    /// child (same process group), so only those sent to authctl itself (kill, a supervisor) are.
    private static let passedOn: [Int32] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]
    private static let child = Mutex<pid_t>(0)

    /// Before any other thread starts (each inherits the mask): the signals above wait for a
    /// thread of their own, which passes them on to the child once there is one, and before that
    /// ends authctl as the signal would have.
    package static func takeSignals() {
        var blocked = sigset_t()
        sigemptyset(&blocked)
        for signal in passedOn { sigaddset(&blocked, signal) }
        pthread_sigmask(SIG_BLOCK, &blocked, nil)
        Threads.start(stackSize: 256 * 1024) {
            var info = siginfo_t()
            while true {
                let signal = sigwaitinfo(&blocked, &info)
                guard signal > 0 else { continue }
                let pid = child.withLock { $0 }
                if pid == 0 {
                    // No child yet: the signal acts here as it would have (its default ends authctl; a
                    // store write's deferral records it and raises it again when the write is done).
                    var only = sigset_t()
                    sigemptyset(&only)
                    sigaddset(&only, signal)
                    pthread_sigmask(SIG_UNBLOCK, &only, nil)
                    raise(signal)
                    pthread_sigmask(SIG_BLOCK, &only, nil)
                } else if info.si_code <= 0 {
                    // SI_USER, SI_QUEUE, SI_TKILL: sent to authctl; a terminal's (SI_KERNEL) reached the child too.
                    kill(pid, signal)
                }
            }
        }
    }

    /// The signal acted on as if authctl had no handler and had not blocked it: the command's end
    /// by that signal passed on.
    package static func raiseUnhandled(_ signal: Int32) {
        Glibc.signal(signal, SIG_DFL)
        var only = sigset_t()
        sigemptyset(&only)
        sigaddset(&only, signal)
        pthread_sigmask(SIG_UNBLOCK, &only, nil)
        raise(signal)
    }

    /// Starts `command` (looked up in PATH) with exactly `environment`, no signal blocked or ignored,
    /// and only the descriptors handed down to authctl (`inherited`) besides 0, 1 and 2.
    package static func spawn(_ command: [String], environment: [String: String], keeping inherited: Set<Int32>)
        throws -> pid_t
    {
        ChildProcess.prepareDescriptors(keeping: inherited)
        let attributes = UnsafeMutablePointer<posix_spawnattr_t>.allocate(capacity: 1)
        posix_spawnattr_init(attributes)
        defer {
            posix_spawnattr_destroy(attributes)
            attributes.deallocate()
        }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(attributes, &none)
        // authctl ignores SIGPIPE, and an ignored signal stays ignored across exec.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in passedOn + [SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(attributes, &defaults)
        posix_spawnattr_setflags(attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp {
                if let pointer { memset(pointer, 0, strlen(pointer)) }
                free(pointer)
            }
        }
        // Under the lock: a signal that arrives while the child starts (it may already be running
        // when posix_spawnp returns) waits for its pid and is passed on, not taken for authctl's.
        let (pid, result) = child.withLock { child -> (pid_t, Int32) in
            var pid: pid_t = 0
            let result = posix_spawnp(&pid, command[0], nil, attributes, &argv, &envp)
            if result == 0 { child = pid }
            return (pid, result)
        }
        guard result == 0 else {
            let code: AuthctlError.Code = result == ENOENT ? .commandNotFound : .cannotExecute
            throw AuthctlError(code, "cannot run \(command[0]): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// Waits for the child to end.
    package static func wait(_ pid: pid_t) -> End {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return .exited(1) }
        }
        // WIFEXITED / WTERMSIG are C macros Swift does not import.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }
}

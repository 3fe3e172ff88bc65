import CProcess
#if canImport(Glibc)
import Glibc
#endif

/// Process-wide safeguards. authctl's memory holds passwords, tokens and AWS keys, so it never
/// leaves a core dump; and a session whose refresh token the service has just rotated is stored
/// before a Ctrl-C, SIGTERM or SIGHUP may end the process.
enum ProcessSafety {
    /// At start-up, before any secret is read: not dumpable (no core, even to a core_pattern pipe;
    /// no ptrace or /proc/PID/mem by the user's other processes) and RLIMIT_CORE 0.
    static func forbidCoreDumps() {
        _ = authctl_forbid_core_dumps()
    }

    /// Runs `body` with SIGINT, SIGTERM and SIGHUP deferred: a request whose answer must be stored
    /// (a rotating refresh) is sent, answered and stored whole; a signal that came meanwhile then
    /// takes effect. Handlers, not a blocked mask: libsecret, GLib and libcurl run threads of their
    /// own, and the kernel delivers a process's signal to any thread that does not block it.
    static func deferringTermination<T>(_ body: () throws -> T) rethrows -> T {
        authctl_defer_termination_signals()
        defer {
            let signal = authctl_release_termination_signals()
            if signal != 0 { raise(signal) }
        }
        return try body()
    }
}

/// Output with write(2). Foundation's FileHandle traps on EPIPE, and once libsecret has run GLib
/// has set SIGPIPE to ignored, so a reader that went away (`authctl token | head -c0`) used to
/// crash authctl.
enum StandardStreams {
    /// The exit status when the reader of stdout has gone: what a shell reports for a process
    /// killed by SIGPIPE (128 + 13), so `set -o pipefail` sees that the output was not delivered.
    static let closedPipeStatus: Int32 = 141

    /// Data for stdout. A closed pipe ends the process quietly with `closedPipeStatus`.
    static func output(_ text: String) {
        if !write(text, to: STDOUT_FILENO) { exit(closedPipeStatus) }
    }

    /// Messages for stderr. A closed stderr loses the message but not the command's work.
    static func message(_ text: String) {
        _ = write(text, to: STDERR_FILENO)
    }

    /// False when the reader has gone (EPIPE); other failures (a full disk) lose the text too.
    private static func write(_ text: String, to fd: Int32) -> Bool {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written > 0 {
                offset += written
            } else if written < 0 && errno == EINTR {
                continue
            } else {
                return !(written < 0 && errno == EPIPE)
            }
        }
        bytes.removeAll()
        return true
    }
}

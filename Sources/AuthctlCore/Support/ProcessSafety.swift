import CProcess

#if canImport(Glibc)
import Glibc
#endif

/// Process-wide safeguards. authctl's memory holds passwords, tokens and AWS keys, so it never
/// leaves a core dump; and a session whose refresh token the service has just rotated is stored
/// before a Ctrl-C, SIGTERM or SIGHUP may end the process.
package enum ProcessSafety {
    /// At start-up, before any secret is read: not dumpable (no core, even to a core_pattern pipe;
    /// no ptrace or /proc/PID/mem by the user's other processes) and RLIMIT_CORE 0.
    package static func forbidCoreDumps() {
        _ = authctl_forbid_core_dumps()
    }

    /// At start-up: a reader that went away is EPIPE from write(2), which `StandardStreams` turns
    /// into exit 141 quietly, not a death by SIGPIPE. (GLib used to set this when libsecret
    /// loaded; commands that never load it need it too.) `ChildProcess` restores the default for
    /// the commands `exec` runs.
    package static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    /// From here SIGINT, SIGTERM and SIGHUP wait until `releaseTermination`: a request whose
    /// answer must be stored (a rotating refresh) is sent, answered and stored whole. Handlers that
    /// record the signal, not a blocked mask: libsecret, GLib and libcurl run threads of their own,
    /// and the kernel delivers a process's signal to any thread that does not block it. Pairs nest.
    package static func deferTermination() {
        authctl_defer_termination_signals()
    }

    /// Ends `deferTermination` (the outermost pair): a signal that came meanwhile takes effect now.
    package static func releaseTermination() {
        let signal = authctl_release_termination_signals()
        if signal != 0 { raise(signal) }
    }
}

/// Output with write(2). Foundation's FileHandle traps on EPIPE, and SIGPIPE is ignored
/// (`ProcessSafety.ignoreBrokenPipes`), so a reader that went away (`authctl token | head -c0`)
/// used to crash authctl.
package enum StandardStreams {
    /// The exit status when the reader of stdout has gone: what a shell reports for a process
    /// killed by SIGPIPE (128 + 13), so `set -o pipefail` sees that the output was not delivered.
    package static let closedPipeStatus: Int32 = 141

    /// Data for stdout. A closed pipe ends the process quietly with `closedPipeStatus`.
    package static func output(_ text: String) {
        if !write(text, to: STDOUT_FILENO) { exit(closedPipeStatus) }
    }

    /// Messages for stderr. A closed stderr loses the message but not the command's work.
    package static func message(_ text: String) {
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

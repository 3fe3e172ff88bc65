import CProcess
import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A password, code, passphrase or PIN to ask a person for, on the terminal or through pinentry.
package struct SecretQuestion: Sendable {
    /// The terminal's prompt, e.g. `Password for alice: ` (pinentry's prompt is it, trimmed).
    package var prompt: String
    /// Echo off on the terminal (a code is shown as it is typed).
    package var hidesEcho: Bool
    /// A previous answer was refused: pinentry shows it (SETERROR); the terminal already said it.
    package var error: String?

    package init(_ prompt: String, hidesEcho: Bool = true, error: String? = nil) {
        self.prompt = prompt
        self.hidesEcho = hidesEcho
        self.error = error
    }
}

/// Where secrets and codes are asked: on the terminal, through a pinentry program, or both (the
/// terminal first). Resolved with the settings (`pinentry`, AUTHCTL_PINENTRY, a desktop session).
package struct SecretPrompts: Sendable, Equatable {
    /// The pinentry program, nil when none is used.
    package var pinentry: String?
    /// Named by the profile or AUTHCTL_PINENTRY: asked through it even where a terminal is.
    package var pinentryFirst = false
    /// False where no terminal may be asked (kube-token that kubectl says is not interactive).
    package var terminal = true
    /// The profile's `pinentry_noninteractive`: kube-token may ask through pinentry where kubectl
    /// says no one can answer on the terminal.
    package var pinentryWhenNotInteractive = false
    /// How long a pinentry may take to answer (AUTHCTL_PINENTRY_TIMEOUT), in seconds.
    package var timeout: Double = 120

    package static let terminalOnly = SecretPrompts()

    static let variable = "AUTHCTL_PINENTRY"
    static let timeoutVariable = "AUTHCTL_PINENTRY_TIMEOUT"

    /// AUTHCTL_PINENTRY, else the profile's `pinentry`, else the system's `pinentry` where a
    /// desktop session is (DISPLAY or WAYLAND_DISPLAY). `none` turns pinentry off; a program that
    /// cannot be found or run is exit 78 naming where it was named.
    package static func resolve(
        environment: [String: String], profile: ProfileConfig, profileName: String, configFile: String
    ) throws -> SecretPrompts {
        var prompts = SecretPrompts()
        if let value = environment[timeoutVariable], !value.isEmpty {
            guard let seconds = Double(value), seconds >= 1, seconds <= 3600 else {
                throw AuthctlError(
                    .configuration, "\(timeoutVariable) is \(UntrustedText(value)): it takes seconds, 1 to 3600")
            }
            prompts.timeout = seconds
        }
        if let value = profile.pinentryNoninteractive {
            prompts.pinentryWhenNotInteractive = try SettingsResolver.boolean(
                value, origin: "pinentry_noninteractive in [profiles.\(profileName)] of \(configFile)")
        }
        let named: (value: String, origin: String)?
        if let value = environment[variable], !value.isEmpty {
            named = (value, variable)
        } else if let value = profile.pinentry, !value.isEmpty {
            named = (value, "pinentry in [profiles.\(profileName)] of \(configFile)")
        } else {
            named = nil
        }
        if let named {
            guard named.value != "none" else { return prompts }
            guard let path = executable(named.value, environment: environment) else {
                throw AuthctlError(
                    .configuration,
                    """
                    pinentry program \(UntrustedText(named.value)) (from \(named.origin)) is not an executable file \
                    (a path, or a name on PATH); name another, or none to ask on the terminal only
                    """)
            }
            prompts.pinentry = path
            prompts.pinentryFirst = true
        } else if !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty {
            prompts.pinentry = executable("pinentry", environment: environment)
        }
        return prompts
    }

    /// A path with a slash as it is, a name searched on PATH; nil unless it is an executable file.
    static func executable(_ name: String, environment: [String: String]) -> String? {
        let candidates =
            name.contains("/")
            ? [name]
            : (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map { "\($0)/\(name)" }
        return candidates.first { path in
            var info = stat()
            return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
        }
    }
}

/// One question through a pinentry program over Assuan: started with posix_spawn on two pipes,
/// every answer line bounded and parsed, the whole bounded by a deadline (the child killed when
/// it passes), the answer read into wiped memory.
package enum PinentryExchange {
    /// Asks and returns the answer. A cancel or no answer in time is exit 64 (as with no terminal);
    /// a pinentry that cannot start, ends or speaks no Assuan is exit 78.
    package static func ask(
        _ question: SecretQuestion, program: String, timeout: Double, environment: [String: String]
    ) throws -> String {
        let session = try Session(program: program, environment: environment, deadline: Deadline(seconds: timeout))
        defer { session.finish() }
        try session.expectOK(after: nil)
        for option in options(environment: environment) { try session.optional(option) }
        try session.optional("SETTIMEOUT \(Int(timeout))")
        try session.command(Assuan.command("SETTITLE", "authctl"))
        let prompt = TerminalText.escaped(question.prompt, keepingNewlines: false)
        let trimmed = prompt.trimmedBlanks()
        try session.command(Assuan.command("SETDESC", "authctl asks: " + trimmed))
        try session.command(Assuan.command("SETPROMPT", trimmed.hasSuffix(":") ? trimmed : trimmed + ":"))
        if let error = question.error {
            try session.command(Assuan.command("SETERROR", TerminalText.escaped(error, keepingNewlines: false)))
        }
        return try session.getPIN()
    }

    /// What pinentry needs to know of the terminal, when authctl has one (pinentry-tty and
    /// pinentry-curses ask there), and the character set.
    static func options(environment: [String: String]) -> [String] {
        var options: [String] = []
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY)
        if fd >= 0 {
            if let name = ttyname(fd) { options.append(Assuan.command("OPTION", "ttyname=" + String(cString: name))) }
            close(fd)
            if let term = environment["TERM"], !term.isEmpty {
                options.append(Assuan.command("OPTION", "ttytype=" + term))
            }
        }
        if let ctype = [environment["LC_ALL"], environment["LC_CTYPE"], environment["LANG"]].compactMap({ $0 }).first(
            where: { !$0.isEmpty })
        {
            options.append(Assuan.command("OPTION", "lc-ctype=" + ctype))
        }
        return options
    }

    struct Deadline {
        let end: timespec

        init(seconds: Double) {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let whole = Int(seconds)
            var end = now
            end.tv_sec += whole
            end.tv_nsec += Int((seconds - Double(whole)) * 1e9)
            if end.tv_nsec >= 1_000_000_000 {
                end.tv_sec += 1
                end.tv_nsec -= 1_000_000_000
            }
            self.end = end
        }

        /// Milliseconds left, 0 once passed.
        var remainingMilliseconds: Int32 {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let left = (end.tv_sec - now.tv_sec) * 1000 + (end.tv_nsec - now.tv_nsec) / 1_000_000
            return Int32(clamping: max(0, left))
        }
    }

    final class Session {
        private let pid: pid_t
        /// authctl's end of the socket pair that is the pinentry's standard input and output (a
        /// socket, not pipes: a write to a pinentry that has gone is EPIPE through MSG_NOSIGNAL,
        /// never a SIGPIPE that would end authctl).
        private let connection: Int32
        private let deadline: Deadline
        private let program: String
        private let line: LockedBuffer

        init(program: String, environment: [String: String], deadline: Deadline) throws {
            self.program = program
            self.deadline = deadline
            line = try LockedBuffer(capacity: Assuan.maximumLine)
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
                throw Self.unusable(program, "no socket pair: \(String(cString: strerror(errno)))")
            }
            // Not inherited by anything else this process starts (the spawn dups the child's end).
            for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            let argv = [strdup(program), nil]
            let envp = ChildProcess.browserEnvironment(environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer {
                for pointer in argv { free(pointer) }
                for pointer in envp { free(pointer) }
            }
            let pid = authctl_spawn_piped(program, argv, envp, ends[1], ends[1])
            let reason = String(cString: strerror(errno))
            close(ends[1])
            guard pid > 0 else {
                close(ends[0])
                throw Self.unusable(program, "cannot start it: \(reason)")
            }
            self.pid = pid
            connection = ends[0]
        }

        /// Says goodbye, closes the connection and waits a moment for the child; kills it if it stays.
        func finish() {
            send("BYE")
            close(connection)
            var status: Int32 = 0
            for _ in 0..<50 {
                if waitpid(pid, &status, WNOHANG) != 0 { return }
                usleep(10_000)
            }
            kill(pid, SIGKILL)
            _ = waitpid(pid, &status, 0)
        }

        /// A command whose ERR is fine (an OPTION this pinentry does not know).
        func optional(_ text: String) throws {
            send(text)
            while true {
                switch try reply(decodingInto: nil) {
                case .ok, .error: return
                case .status, .data, .end: continue
                case .inquire: throw Self.unusable(program, "it asked for data (INQUIRE)")
                }
            }
        }

        func command(_ text: String) throws {
            send(text)
            try expectOK(after: text)
        }

        func expectOK(after text: String?) throws {
            while true {
                switch try reply(decodingInto: nil) {
                case .ok: return
                case .status, .data, .end: continue
                case .error(let code, let message): throw failure(code: code, message: message)
                case .inquire: throw Self.unusable(program, "it asked for data (INQUIRE)")
                }
            }
        }

        func getPIN() throws -> String {
            send("GETPIN")
            let secret = try LockedBuffer(capacity: Assuan.maximumLine * 4)
            while true {
                let reply = try reply(decodingInto: secret)
                switch reply {
                case .ok:
                    return String(decoding: secret.bytes, as: UTF8.self)
                case .status, .end: continue
                case .data: continue
                case .error(let code, let message): throw failure(code: code, message: message)
                case .inquire:
                    send("CAN")
                    throw Self.unusable(program, "it asked for data (INQUIRE)")
                }
            }
        }

        private func failure(code: UInt32, message: String) -> AuthctlError {
            switch Assuan.code(code) {
            case Assuan.cancelled, Assuan.fullyCancelled:
                return AuthctlError(.usage, "the pinentry prompt was cancelled; nothing was sent")
            case Assuan.timedOut:
                return Self.noAnswer
            default:
                return Self.unusable(program, "it answered ERR \(code) \(UntrustedText(message))")
            }
        }

        static var noAnswer: AuthctlError {
            AuthctlError(.usage, "no answer from pinentry in time (AUTHCTL_PINENTRY_TIMEOUT); nothing was sent")
        }

        static func unusable(_ program: String, _ why: String) -> AuthctlError {
            AuthctlError(.configuration, "pinentry \(UntrustedText(program)) cannot ask: \(why)")
        }

        /// The next line, parsed; `D` data is appended to `secret`.
        private func reply(decodingInto secret: LockedBuffer?) throws -> Assuan.Reply {
            line.clear()
            while true {
                var ready = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
                let left = deadline.remainingMilliseconds
                guard left > 0, poll(&ready, 1, left) > 0 else {
                    if left > 0 && errno == EINTR { continue }
                    kill(pid, SIGKILL)
                    throw Self.noAnswer
                }
                var byte: UInt8 = 0
                let count = read(connection, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                guard count == 1 else { throw Self.unusable(program, "it ended before answering") }
                if byte == UInt8(ascii: "\n") { break }
                guard line.count < Assuan.maximumLine - 1 else {
                    throw Self.unusable(program, "a line longer than \(Assuan.maximumLine - 1) bytes")
                }
                withUnsafeBytes(of: &byte) { line.append($0) }
            }
            do {
                if let secret {
                    let reply = try Assuan.parse(line.bytes, decodingInto: secret.spare)
                    if case .data(let count) = reply { secret.advance(count) }
                    return reply
                }
                return try Assuan.parse(line.bytes, decodingInto: UnsafeMutableRawBufferPointer(start: nil, count: 0))
            } catch let error as Assuan.ProtocolError {
                throw Self.unusable(program, error.message)
            }
        }

        private func send(_ text: String) {
            var bytes = Array((text + "\n").utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes {
                    Glibc.send(connection, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
                }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
            bytes.withUnsafeMutableBytes { _ = memset($0.baseAddress!, 0, $0.count) }
        }
    }
}

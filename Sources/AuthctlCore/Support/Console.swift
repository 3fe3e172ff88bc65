import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Everything a command reads from or writes to the person or the calling script.
/// Injected, so commands are tested without a terminal.
package protocol Console: AnyObject, Sendable {
    /// Standard input is a terminal (a person may be asked).
    var inputIsTerminal: Bool { get }
    /// A person can be asked on the controlling terminal (`prompt` reads /dev/tty), even when
    /// standard input is a pipe (`pass show x | authctl signin --password-stdin`).
    var canPrompt: Bool { get }
    /// Data a command exists to print (JSON, token, whoami), on stdout.
    func output(_ text: String)
    /// Messages for the person, on stderr.
    func message(_ text: String)
    /// A picture authctl drew itself (the QR code, with its colours), on stderr: not escaped.
    func drawing(_ text: String)
    /// One line of standard input without its line ending, or nil at end of input.
    func readLine() -> String?
    /// Asks on the terminal; `secret` turns echo off. Nil when there is no terminal or at end of input.
    func prompt(_ question: String, secret: Bool) -> String?
    /// Standard error is a terminal, where a status line can redraw itself (a progress bar).
    var messagesGoToTerminal: Bool { get }
    /// A status line on stderr that replaces the previous one on a terminal; `done` ends it with a
    /// newline. Elsewhere a plain message.
    func status(_ text: String, done: Bool)
    /// Where secrets and codes are asked from now on (the settings' `SecretPrompts`).
    func useSecretPrompts(_ prompts: SecretPrompts)
    /// A password, code, passphrase or PIN can be asked for: on the terminal, or through pinentry.
    var canAskSecret: Bool { get }
    /// Secrets are asked through pinentry, not the terminal (none there, or pinentry named).
    var asksSecretsThroughPinentry: Bool { get }
    /// The one place a password, code, passphrase or PIN is asked: through pinentry when
    /// `asksSecretsThroughPinentry`, else as `prompt`. Nil when nothing can ask or at end of input;
    /// throws when pinentry was cancelled, did not answer in time, or cannot ask.
    func askSecret(_ question: SecretQuestion) throws -> String?
}

extension Console {
    /// Consoles that cannot tell the two apart prompt where standard input is a terminal.
    package var canPrompt: Bool { inputIsTerminal }

    package var messagesGoToTerminal: Bool { false }

    package func status(_ text: String, done: Bool) { message(text) }

    package func drawing(_ text: String) { message(text) }

    package func useSecretPrompts(_ prompts: SecretPrompts) {}

    package var canAskSecret: Bool { canPrompt }

    package var asksSecretsThroughPinentry: Bool { false }

    package func askSecret(_ question: SecretQuestion) throws -> String? {
        prompt(question.prompt, secret: question.hidesEcho)
    }
}

/// The real console: stdout/stderr, standard input, and /dev/tty for prompts. Whatever it
/// writes has its control characters escaped but for newlines (TerminalText), so text from
/// outside never reaches the terminal raw, whichever command printed it.
package final class TerminalConsole: Console {
    private let secretPrompts = Mutex(SecretPrompts.terminalOnly)
    private let environment: [String: String]

    package init(environment: [String: String]) { self.environment = environment }

    package var inputIsTerminal: Bool { isatty(STDIN_FILENO) == 1 }

    /// The controlling terminal opens (and may be asked): prompts go there whatever standard input is.
    package var canPrompt: Bool {
        guard secretPrompts.withLock({ $0.terminal }) else { return false }
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }

    package func output(_ text: String) {
        StandardStreams.output(TerminalText.escaped(text, keepingNewlines: true) + "\n")
    }

    package func message(_ text: String) {
        StandardStreams.message(TerminalText.escaped(text, keepingNewlines: true) + "\n")
    }

    package func drawing(_ text: String) {
        StandardStreams.message(text + "\n")
    }

    package var messagesGoToTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    package func status(_ text: String, done: Bool) {
        guard messagesGoToTerminal else { return message(text) }
        // Carriage return, the line, erase to its end: the bar redraws in place.
        StandardStreams.message(
            "\r" + TerminalText.escaped(text, keepingNewlines: false) + "\u{1b}[K" + (done ? "\n" : ""))
    }

    package func useSecretPrompts(_ prompts: SecretPrompts) {
        secretPrompts.withLock { $0 = prompts }
    }

    package var asksSecretsThroughPinentry: Bool {
        let prompts = secretPrompts.withLock { $0 }
        return prompts.pinentry != nil && (prompts.pinentryFirst || !canPrompt)
    }

    package var canAskSecret: Bool { asksSecretsThroughPinentry || canPrompt }

    package func askSecret(_ question: SecretQuestion) throws -> String? {
        let prompts = secretPrompts.withLock { $0 }
        guard let program = prompts.pinentry, prompts.pinentryFirst || !canPrompt else {
            return prompt(question.prompt, secret: question.hidesEcho)
        }
        return try PinentryExchange.ask(question, program: program, timeout: prompts.timeout, environment: environment)
    }

    package func readLine() -> String? {
        guard let line = Swift.readLine(strippingNewline: true) else { return nil }
        return line.hasSuffix("\r") ? String(line.dropLast()) : line
    }

    package func prompt(_ question: String, secret: Bool) -> String? {
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }

        // Echo off and the signal handlers in place before the question shows: a Ctrl-C the
        // moment it appears still ends the line and restores echo (getpass's order).
        var saved = termios()
        let canHideEcho = secret && tcgetattr(fd, &saved) == 0
        if canHideEcho {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            tcsetattr(fd, TCSAFLUSH, &quiet)
        }
        TerminalEcho.remember(fd: fd, settings: canHideEcho ? saved : nil)
        defer {
            if canHideEcho { tcsetattr(fd, TCSAFLUSH, &saved) }
            TerminalEcho.forget()
        }
        write(fd: fd, TerminalText.escaped(question, keepingNewlines: true))
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(fd, &byte, 1)
            if count <= 0 { return bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self) }
            if byte == UInt8(ascii: "\n") { break }
            bytes.append(byte)
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    private func write(fd: Int32, _ text: String) {
        var data = Array(text.utf8)
        _ = Glibc.write(fd, &data, data.count)
    }
}

/// While a prompt waits: if the process is interrupted (Ctrl-C), terminated or hung up on, ends
/// the prompt's line (so the shell's next prompt starts on a line of its own) and restores the
/// terminal's echo when a secret prompt has it off.
package enum TerminalEcho {
    private static let signals = [SIGINT, SIGTERM, SIGHUP]

    // Unsafe: written before the handlers are installed, then read only by the signal handler,
    // which may take no lock.
    nonisolated(unsafe) private static var fd: Int32 = -1
    nonisolated(unsafe) private static var restoresEcho = false
    nonisolated(unsafe) private static var settings = termios()

    /// `settings`: the terminal's own, to restore (nil: echo was left on).
    package static func remember(fd: Int32, settings: termios?) {
        if let settings { self.settings = settings }
        restoresEcho = settings != nil
        self.fd = fd
        for signo in signals {
            signal(signo) { signo in
                if TerminalEcho.fd >= 0 {
                    if TerminalEcho.restoresEcho { tcsetattr(TerminalEcho.fd, TCSAFLUSH, &TerminalEcho.settings) }
                    var newline = UInt8(ascii: "\n")
                    _ = Glibc.write(TerminalEcho.fd, &newline, 1)
                }
                signal(signo, SIG_DFL)
                raise(signo)
            }
        }
    }

    package static func forget() {
        fd = -1
        for signo in signals { signal(signo, SIG_DFL) }
    }
}

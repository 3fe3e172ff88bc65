#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Opens a URL in the person's browser: `$BROWSER` when set (each `:`-separated command in turn,
/// the URL as its one argument or in place of `%s`, as Python's webbrowser and xdg-utils do),
/// else `xdg-open` when a display is available. Never through a shell.
package struct BrowserLauncher {
    package let environment: [String: String]

    /// A graphical session this process can open a window in (not over SSH).
    package var hasDisplay: Bool {
        let set = { (name: String) in !(environment[name] ?? "").isEmpty }
        return (set("DISPLAY") || set("WAYLAND_DISPLAY")) && !set("SSH_CONNECTION")
    }

    /// The commands that would be tried, in order; empty when nothing should be opened.
    package func commands(for url: String) -> [[String]] {
        if let browser = environment["BROWSER"], !browser.isEmpty {
            return browser.split(separator: ":").compactMap { entry in
                let words = entry.split(separator: " ").map(String.init)
                guard !words.isEmpty else { return nil }
                return words.contains { $0.contains("%s") }
                    ? words.map { $0.replacing("%s", with: url) }
                    : words + [url]
            }
        }
        return hasDisplay ? [["xdg-open", url]] : []
    }

    /// Starts the first command that can be started; returns its name, or nil when none was.
    /// The browser gets no stdin or stdout of ours (the token or JSON goes there) and no
    /// descriptor beyond stderr.
    package func open(_ url: String) -> String? {
        for command in commands(for: url) where spawn(command) {
            return command[0]
        }
        return nil
    }

    private func spawn(_ command: [String]) -> Bool {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        // Nothing of ours beyond stderr (libcurl's and D-Bus's sockets, the listener): all close at exec.
        for fd in ChildProcess.openDescriptors() where fd > 2 {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
        defer { for arg in argv { free(arg) } }
        let inherited = ChildProcess.browserEnvironment(environment)
        var envp: [UnsafeMutablePointer<CChar>?] = inherited.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for entry in envp { free(entry) } }
        var pid: pid_t = 0
        return posix_spawnp(&pid, command[0], &actions, nil, &argv, &envp) == 0
    }
}

import Foundation
import XCTest

/// Runs external programs for the tests: a private D-Bus session bus, a real
/// gnome-keyring-daemon on it, `secret-tool`, `dbus-send`, and this test binary itself
/// (for checks that need a fresh process, since libsecret caches its connection).
enum Tools {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
        var timedOut: Bool
        var all: String { stdout + stderr }
    }

    /// The absolute path of `name` on PATH, or an error telling how to install it.
    static func find(_ name: String, package: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for dir in path.split(separator: ":") {
            let candidate = "\(dir)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw Missing(
            description:
                "\(name) is not on PATH; the SecureStore tests need a real D-Bus session bus and "
                + "gnome-keyring: apt-get install \(package)")
    }

    /// Runs a program to completion (killing it after `timeout` seconds) and captures both
    /// outputs through temporary files.
    ///
    /// posix_spawn + waitpid rather than Foundation's Process: Process on Linux can miss the
    /// exit of a child that ends within milliseconds (`dbus-daemon --fork`), leaving a zombie
    /// and a caller waiting forever.
    @discardableResult
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String],
        stdin: String? = nil, timeout: Double = 30
    ) throws -> Output {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("authctl-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: scratch, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(at: scratch) }
        let inPath = scratch.appendingPathComponent("stdin").path
        let outPath = scratch.appendingPathComponent("stdout").path
        let errPath = scratch.appendingPathComponent("stderr").path
        try Data((stdin ?? "").utf8).write(to: URL(fileURLWithPath: inPath))

        let child = try Child(
            executable, arguments, environment: environment,
            stdin: inPath, stdout: outPath, stderr: errPath)
        var timedOut = false
        if child.wait(timeout: timeout) == nil {
            timedOut = true
            child.kill(SIGKILL)
        }
        let status = child.wait(timeout: 10) ?? -1
        return Output(
            status: status,
            stdout: (try? String(contentsOfFile: outPath, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "",
            timedOut: timedOut)
    }
}

/// A child process started with posix_spawn, with default signal dispositions and an
/// empty signal mask, and its standard streams on files.
final class Child {
    let pid: pid_t
    private(set) var exitStatus: Int32?

    init(
        _ executable: String, _ arguments: [String], environment: [String: String],
        stdin: String, stdout: String, stderr: String
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        var all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else {
            throw Tools.Missing(description: "could not start \(executable): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
    }

    /// The exit status (128 + signal when killed), or nil if still running after `timeout`.
    @discardableResult
    func wait(timeout: Double) -> Int32? {
        if let exitStatus { return exitStatus }
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                let signal = status & 0x7f
                exitStatus = signal == 0 ? (status >> 8) & 0xff : 128 + signal
                return exitStatus
            }
            if result < 0 && errno != EINTR {
                exitStatus = -1
                return exitStatus
            }
            usleep(10_000)
        } while Date() < deadline
        return nil
    }

    var isRunning: Bool { wait(timeout: 0) == nil }

    func kill(_ signal: Int32) {
        if exitStatus == nil { _ = Glibc.kill(pid, signal) }
    }

    /// SIGTERM, then SIGKILL if it has not ended within `grace` seconds.
    func stop(grace: Double = 5) {
        guard isRunning else { return }
        kill(SIGTERM)
        if wait(timeout: grace) == nil {
            kill(SIGKILL)
            wait(timeout: 5)
        }
    }
}

/// A private session bus (`dbus-daemon --session --nofork`) and, optionally, a real
/// gnome-keyring-daemon serving org.freedesktop.secrets on it, all under a temporary HOME.
final class PrivateSecretService {
    let home: URL
    let address: String
    private let bus: Child
    private(set) var keyring: Child?
    /// The environment for programs that must use this bus and HOME (no DISPLAY, so no
    /// graphical prompt can appear on the developer's desktop).
    let environment: [String: String]

    /// - Parameter busConfig: a dbus-daemon configuration to use instead of `--session`
    ///   (e.g. one without service directories, so nothing can be activated).
    init(name: String, busConfig: String? = nil) throws {
        let dbusDaemon = try Tools.find("dbus-daemon", package: "dbus")
        home = FileManager.default.temporaryDirectory
            .appendingPathComponent("authctl-securestore-\(name)-\(UUID().uuidString.prefix(8))")
        let runtime = home.appendingPathComponent("run")
        try FileManager.default.createDirectory(
            at: runtime, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home.path)

        var env = ProcessInfo.processInfo.environment
        for variable in [
            "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS",
            "GNOME_KEYRING_CONTROL", "SSH_AUTH_SOCK", "SECRET_BACKEND",
        ] {
            env.removeValue(forKey: variable)
        }
        env["HOME"] = home.path
        env["XDG_DATA_HOME"] = home.appendingPathComponent(".local/share").path
        env["XDG_CONFIG_HOME"] = home.appendingPathComponent(".config").path
        env["XDG_CACHE_HOME"] = home.appendingPathComponent(".cache").path
        env["XDG_RUNTIME_DIR"] = runtime.path

        // --nofork: the bus stays a child of this process, so it is reaped when stopped
        // (a forked daemon would be re-parented to PID 1, which may not reap in a container).
        var arguments = ["--nofork", "--print-address=1", "--print-pid=1"]
        if let busConfig {
            let configURL = home.appendingPathComponent("bus.conf")
            try busConfig.write(to: configURL, atomically: true, encoding: .utf8)
            arguments.insert("--config-file=\(configURL.path)", at: 0)
        } else {
            arguments.insert("--session", at: 0)
        }
        // dbus-daemon is started with the temporary HOME: anything it activates inherits it.
        let busOut = home.appendingPathComponent("dbus-daemon.out").path
        let busErr = home.appendingPathComponent("dbus-daemon.err").path
        bus = try Child(
            dbusDaemon, arguments, environment: env,
            stdin: "/dev/null", stdout: busOut, stderr: busErr)
        var lines: [String] = []
        let deadline = Date().addingTimeInterval(15)
        while lines.count < 2 {
            let text = (try? String(contentsOfFile: busOut, encoding: .utf8)) ?? ""
            lines = text.split(separator: "\n").map(String.init)
            if lines.count >= 2 { break }
            if !bus.isRunning || Date() > deadline {
                bus.stop()
                let errors = (try? String(contentsOfFile: busErr, encoding: .utf8)) ?? ""
                throw Tools.Missing(description: "dbus-daemon did not start: \(errors)")
            }
            usleep(10_000)
        }
        address = lines[0]
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        environment = env
    }

    /// Starts gnome-keyring-daemon in the foreground (a child of this process), creating and
    /// unlocking the login keyring with `password` (nil: no login keyring at all), and waits
    /// until it owns org.freedesktop.secrets (so the bus never activates a second one).
    func startKeyring(password: String?) throws {
        let daemon = try Tools.find("gnome-keyring-daemon", package: "gnome-keyring")
        let passwordFile = home.appendingPathComponent("keyring-password")
        try Data((password.map { "\($0)\n" } ?? "").utf8).write(to: passwordFile)
        defer { try? FileManager.default.removeItem(at: passwordFile) }
        keyring = try Child(
            daemon,
            password == nil
                ? ["--foreground", "--components=secrets"]
                : ["--foreground", "--unlock", "--components=secrets"],
            environment: environment, stdin: passwordFile.path,
            stdout: home.appendingPathComponent("gnome-keyring.out").path,
            stderr: home.appendingPathComponent("gnome-keyring.err").path)
        try waitForName("org.freedesktop.secrets", seconds: 15)
    }

    func nameHasOwner(_ name: String) throws -> Bool {
        let dbusSend = try Tools.find("dbus-send", package: "dbus")
        let reply = try Tools.run(
            dbusSend,
            [
                "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner", "string:\(name)",
            ], environment: environment, timeout: 10)
        return reply.stdout.contains("boolean true")
    }

    private func waitForName(_ name: String, seconds: Double) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try nameHasOwner(name) { return }
            if let keyring, !keyring.isRunning {
                let log =
                    (try? String(
                        contentsOf: home.appendingPathComponent("gnome-keyring.err"),
                        encoding: .utf8)) ?? ""
                throw Tools.Missing(description: "gnome-keyring-daemon exited: \(log)")
            }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw Tools.Missing(description: "\(name) did not appear on the private bus within \(Int(seconds)) s")
    }

    /// Locks the login collection through the Secret Service D-Bus API.
    func lockLoginCollection() throws {
        let dbusSend = try Tools.find("dbus-send", package: "dbus")
        let reply = try Tools.run(
            dbusSend,
            [
                "--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
                "org.freedesktop.Secret.Service.Lock",
                "array:objpath:/org/freedesktop/secrets/collection/login",
            ], environment: environment, timeout: 10)
        guard reply.status == 0 else {
            throw Tools.Missing(description: "could not lock the login collection: \(reply.all)")
        }
    }

    /// `secret-tool search --all ATTR VALUE...` on this bus (attributes are printed on stderr).
    func secretToolSearch(_ attributes: [String: String]) throws -> Tools.Output {
        let secretTool = try Tools.find("secret-tool", package: "libsecret-tools")
        var arguments = ["search", "--all"]
        for (name, value) in attributes.sorted(by: { $0.key < $1.key }) {
            arguments += [name, value]
        }
        return try Tools.run(secretTool, arguments, environment: environment, timeout: 20)
    }

    /// Stops the keyring daemon and the bus (only the processes this fixture started).
    func stop() {
        keyring?.stop()
        keyring = nil
        bus.stop()
        try? FileManager.default.removeItem(at: home)
    }
}

/// Runs this test binary again, restricted to `SecureStoreProbe/testProbe`, with
/// `environment`: a fresh process with its own libsecret connection.
enum Probe {
    struct Step: CustomStringConvertible {
        var operation: String
        /// `ok:<value>` or `error:<kind>:<message>`
        var outcome: String
        var seconds: Double
        var description: String { "\(operation) -> \(outcome) in \(String(format: "%.2f", seconds)) s" }
        var errorKind: String? {
            guard outcome.hasPrefix("error:") else { return nil }
            return String(outcome.dropFirst("error:".count).prefix { $0 != ":" })
        }
        var message: String {
            guard outcome.hasPrefix("error:") else { return outcome }
            return String(outcome.dropFirst("error:".count).drop { $0 != ":" }.dropFirst())
        }
    }

    struct Failure: Error, CustomStringConvertible { var description: String }

    static func run(
        operations: [String], profile: String, timeout: Double,
        environment: [String: String], limit: Double = 60
    ) throws -> [Step] {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let out = FileManager.default.temporaryDirectory
            .appendingPathComponent("authctl-probe-\(UUID().uuidString).tsv")
        defer { try? FileManager.default.removeItem(at: out) }
        var env = environment
        env["AUTHCTL_SECURESTORE_PROBE"] = operations.joined(separator: ",")
        env["AUTHCTL_SECURESTORE_PROBE_PROFILE"] = profile
        env["AUTHCTL_SECURESTORE_PROBE_TIMEOUT"] = String(timeout)
        env["AUTHCTL_SECURESTORE_PROBE_OUT"] = out.path
        let result = try Tools.run(
            executable, ["SecureStoreTests.SecureStoreProbe/testProbe"],
            environment: env, timeout: limit)
        guard !result.timedOut else {
            throw Failure(description: "the probe process hung for \(Int(limit)) s:\n\(result.all)")
        }
        guard let text = try? String(contentsOf: out, encoding: .utf8) else {
            throw Failure(description: "the probe process wrote no result (status \(result.status)):\n\(result.all)")
        }
        return text.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
            return Step(
                operation: String(fields[0]),
                outcome: fields.count > 2 ? String(fields[2]) : "",
                seconds: fields.count > 1 ? Double(fields[1]) ?? -1 : -1)
        }
    }
}

import Foundation
import SecureStore
import XCTest

/// What SecretServiceStore says when the Secret Service cannot be used: a hung bus, a bus
/// without a provider, a bus address that leads nowhere, a locked keyring. Each case runs in
/// a fresh process (`Probe`), because libsecret keeps its first connection for the life of
/// the process.
final class SecretServiceFailureTests: XCTestCase {
    func testHungBusTimesOutWithinTheTimeout() throws {
        let socketDir = FileManager.default.temporaryDirectory
            .appendingPathComponent("authctl-hung-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: socketDir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: socketDir) }
        let socketPath = socketDir.appendingPathComponent("bus").path
        // Accepts connections (the kernel queues them) but never reads or answers.
        let listener = try SilentUnixListener(path: socketPath)
        defer { listener.close() }

        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(socketPath)"
        env.removeValue(forKey: "DISPLAY")
        let start = Date()
        let steps = try Probe.run(
            operations: ["read", "write", "delete", "read"], profile: "hung",
            timeout: 1, environment: env, limit: 60)
        XCTAssertEqual(steps.map(\.operation), ["read", "write", "delete", "read"])
        for step in steps {
            XCTAssertEqual(step.errorKind, "timeout", "\(step)")
            XCTAssertTrue(step.message.contains("did not answer within 1 s"), "\(step)")
            XCTAssertLessThan(step.seconds, 2.5, "\(step)")
        }
        // The first call really waited for the timeout. A later one may fail at once: GLib
        // shares the half-open session-bus connection between threads, and when the abandoned
        // attempt is cancelled a caller blocked on the same connection gets its error.
        XCTAssertGreaterThanOrEqual(steps.first?.seconds ?? 0, 0.9, "\(steps)")
        XCTAssertLessThan(Date().timeIntervalSince(start), 30)
    }

    func testBusWithoutProviderIsUnavailable() throws {
        // A bus configuration without service directories: nothing can be activated.
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:tmpdir=/tmp</listen>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        let bus = try PrivateSecretService(name: "noprovider", busConfig: config)
        defer { bus.stop() }
        let steps = try Probe.run(
            operations: ["read", "write", "delete"], profile: "noprovider",
            timeout: 10, environment: bus.environment)
        XCTAssertEqual(steps.count, 3)
        for step in steps {
            XCTAssertEqual(step.errorKind, "unavailable", "\(step)")
            XCTAssertTrue(step.message.contains("no Secret Service provider (org.freedesktop.secrets)"), "\(step)")
            XCTAssertTrue(step.message.contains("gnome-keyring-daemon --start --components=secrets"), "\(step)")
            XCTAssertTrue(step.message.contains("KeePassXC"), "\(step)")
            XCTAssertLessThan(step.seconds, 5, "\(step)")
        }
    }

    func testBusAddressLeadingNowhereIsUnavailable() throws {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/authctl-no-bus-\(UUID().uuidString)"
        let steps = try Probe.run(
            operations: ["read", "write", "delete"], profile: "nowhere",
            timeout: 10, environment: env)
        XCTAssertEqual(steps.count, 3)
        for step in steps {
            XCTAssertEqual(step.errorKind, "unavailable", "\(step)")
            XCTAssertTrue(step.message.contains("cannot connect to the D-Bus session bus"), "\(step)")
            XCTAssertTrue(step.message.contains("dbus-run-session"), "\(step)")
        }
    }

    func testLockedKeyringIsLocked() throws {
        let service = try PrivateSecretService(name: "locked")
        defer { service.stop() }
        try service.startKeyring(password: "pw")
        // Store an item while unlocked, then lock the collection (no prompter can unlock it:
        // the bus has no DISPLAY, so gcr-prompter cannot start).
        let before = try Probe.run(
            operations: ["write", "read"], profile: "locked",
            timeout: 10, environment: service.environment)
        XCTAssertEqual(before.map(\.outcome), ["ok:written", "ok:{\"probe\":true}"], "\(before)")
        try service.lockLoginCollection()

        let steps = try Probe.run(
            operations: ["read", "write", "delete"], profile: "locked",
            timeout: 10, environment: service.environment)
        XCTAssertEqual(steps.count, 3)
        for step in steps {
            XCTAssertEqual(step.errorKind, "locked", "\(step)")
            XCTAssertTrue(
                step.message.contains("the keyring is locked and cannot be unlocked without a prompt"), "\(step)")
            XCTAssertTrue(step.message.contains("gnome-keyring-daemon --unlock"), "\(step)")
        }
    }

    func testKeyringWithoutDefaultCollectionCannotStore() throws {
        // A fresh keyring daemon that was never given a password has no login keyring,
        // and creating one needs a prompt.
        let service = try PrivateSecretService(name: "nocollection")
        defer { service.stop() }
        try service.startKeyring(password: nil)
        let steps = try Probe.run(
            operations: ["read", "write"], profile: "nocollection",
            timeout: 10, environment: service.environment)
        XCTAssertEqual(steps.first?.outcome, "ok:nil", "\(steps)")
        XCTAssertEqual(steps.last?.errorKind, "locked", "\(steps)")
        XCTAssertTrue(steps.last?.message.contains("no default keyring") ?? false, "\(steps)")
    }
}

/// A listening Unix socket that never accepts, reads or answers: a hung D-Bus.
final class SilentUnixListener {
    private var fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Tools.Missing(description: "socket() failed: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw Tools.Missing(description: "socket path too long: \(path)") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let code = errno
            Glibc.close(fd)
            throw Tools.Missing(description: "could not listen on \(path): errno \(code)")
        }
    }

    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }

    deinit { close() }
}

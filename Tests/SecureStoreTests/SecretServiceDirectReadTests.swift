import Foundation
import SecureStore
import Synchronization
import XCTest

/// Direct reads (a private D-Bus connection, no libsecret) against the same real
/// gnome-keyring-daemon as the rest of SecretServiceStoreTests: they must find what libsecret
/// finds, byte for byte, say how they read it, and leave to libsecret what they cannot do.
extension SecretServiceStoreTests {
    /// A store whose reads are recorded. Its direct reads go to `busAddress` (the private bus by
    /// default); libsecret always reaches the private bus, this process's own.
    func observedStore(busAddress: String? = nil, timeout: Double = 10) -> (SecretServiceStore, EventLog) {
        let events = EventLog()
        var environment = service.environment
        if let busAddress { environment["DBUS_SESSION_BUS_ADDRESS"] = busAddress }
        let store = SecretServiceStore(
            timeout: timeout, environment: environment,
            observer: { event in events.append(event) })
        return (store, events)
    }

    func testReadsGoDirectlyOverTheBusAndAgreeWithLibsecret() throws {
        let profile = uniqueProfile()
        let secrets = [
            "", "a", String(repeating: "x", count: 15), String(repeating: "y", count: 16),
            #"{"accessToken":"é.ü.✓","refreshToken":"r"}"#, String(repeating: "z", count: 40_000),
        ]
        let (direct, events) = observedStore()
        let viaLibsecret = SecretServiceStore(timeout: 10, environment: service.environment, directReads: false)
        for (index, secret) in secrets.enumerated() {
            let key = SecretKey(kind: "kind\(index)", profile: profile, userPoolId: "p", clientId: "c")
            try store.write(key, label: "direct \(index)", secret: secret)
            XCTAssertEqual(try direct.read(key), secret, "secret \(index)")
            XCTAssertEqual(try viaLibsecret.read(key), secret, "secret \(index)")
        }
        // Narrowed by client as libsecret narrows: another client's item is not found.
        XCTAssertNil(try direct.read(SecretKey(kind: "kind0", profile: profile, userPoolId: "p", clientId: "other")))
        XCTAssertNil(try direct.read(SecretKey(kind: "none", profile: profile, userPoolId: "", clientId: "")))
        XCTAssertEqual(
            events.all,
            Array(repeating: .read(direct: true, libsecretBecause: nil), count: secrets.count + 2))
    }

    /// Every new connection makes its own key exchange; each must give the same bytes. A shared
    /// secret that starts with a zero byte (1 in 256) is where an unpadded key would differ: the
    /// item would not decrypt, and the read would go through libsecret because of the `answer`.
    /// (A connection the loaded machine drops now and then is tolerated, and shown.)
    func testManyKeyExchangesAllReadTheSameSecret() throws {
        let key = session(uniqueProfile())
        let secret = #"{"accessToken":"a.b.c","refreshToken":"r"}"#
        try store.write(key, label: "exchanges", secret: secret)
        var detours: [SecretServiceEvent] = []
        for _ in 0..<300 {
            let (fresh, events) = observedStore()
            XCTAssertEqual(try fresh.read(key), secret)
            detours += events.all.filter { $0 != .read(direct: true, libsecretBecause: nil) }
        }
        XCTAssertFalse(detours.contains(.read(direct: false, libsecretBecause: .answer)), "\(detours)")
        XCTAssertLessThanOrEqual(detours.count, 3, "\(detours)")
    }

    /// A bus address the direct reader does not speak: libsecret reads it, and says so.
    func testAnAddressItDoesNotSpeakIsLeftToLibsecret() throws {
        let key = session(uniqueProfile())
        try store.write(key, label: "address", secret: "through libsecret")
        let (store, events) = observedStore(busAddress: "unix:tmpdir=/tmp")
        XCTAssertEqual(try store.read(key), "through libsecret")
        XCTAssertEqual(events.all, [.read(direct: false, libsecretBecause: .address)])
    }

    /// A socket that refuses the authentication is a detour through libsecret (which reaches the
    /// real bus of this process), not an error.
    func testABusThatRejectsUsIsLeftToLibsecret() throws {
        let key = session(uniqueProfile())
        try store.write(key, label: "rejected", secret: "still read")
        let fake = try FakeBusSocket(answer: Array("REJECTED DBUS_COOKIE_SHA1\r\n".utf8))
        defer { fake.stop() }
        let (store, events) = observedStore(busAddress: "unix:path=\(fake.path)")
        XCTAssertEqual(try store.read(key), "still read")
        XCTAssertEqual(events.all, [.read(direct: false, libsecretBecause: .connection)])
    }

    /// A bus that never answers costs one timeout, not one for the direct read and another
    /// for libsecret.
    func testABusThatNeverAnswersTimesOutOnce() throws {
        let fake = try FakeBusSocket(answer: nil)
        defer { fake.stop() }
        let (store, events) = observedStore(busAddress: "unix:path=\(fake.path)", timeout: 0.5)
        let start = Date()
        XCTAssertThrowsError(try store.read(session(uniqueProfile()))) { error in
            XCTAssertEqual((error as? SecureStoreError)?.kind, .timeout)
        }
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertGreaterThanOrEqual(elapsed, 0.45)
        XCTAssertLessThan(elapsed, 0.95)
        XCTAssertEqual(events.all, [])
    }
}

/// The events a store reported, in order.
final class EventLog: Sendable {
    private let events = Mutex<[SecretServiceEvent]>([])
    func append(_ event: SecretServiceEvent) { events.withLock { $0.append(event) } }
    var all: [SecretServiceEvent] { events.withLock { $0 } }
}

/// A listening Unix socket that accepts one connection and writes `answer` (nil: nothing,
/// ever) after the client's first bytes.
final class FakeBusSocket: @unchecked Sendable {
    // Unchecked: `listener` is set once in init; the accept thread only reads it.
    let path: String
    private let listener: Int32
    private let thread: Thread

    init(answer: [UInt8]?) throws {
        let path = NSTemporaryDirectory() + "authctl-fake-bus-\(UUID().uuidString.prefix(8))"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        self.path = path
        self.listener = listener
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in path.utf8.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 4) == 0 else { throw Tools.Missing(description: "fake bus socket") }
        thread = Thread {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            var buffer = [UInt8](repeating: 0, count: 256)
            _ = read(client, &buffer, buffer.count)
            if let answer { _ = write(client, answer, answer.count) }
            // Kept open without answering until the test closes the listener.
            _ = read(client, &buffer, buffer.count)
            close(client)
        }
        thread.start()
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(path)
    }
}

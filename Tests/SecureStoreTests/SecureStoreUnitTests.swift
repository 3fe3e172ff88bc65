import Foundation
import XCTest

@testable import SecureStore

/// Parts that need no Secret Service: error classification, the session-bus check, and
/// the in-memory store.
final class LibsecretFailureTests: XCTestCase {
    func failure(
        _ domain: String, _ code: Int, remote: String? = nil, _ message: String = "m",
        stage: LibsecretFailure.Stage = .call
    ) -> SecureStoreError {
        LibsecretFailure(domain: domain, code: code, remoteName: remote, message: message, stage: stage)
            .storeError(timeout: 5)
    }

    func testCancelledIsTimeout() {
        let error = failure("g-io-error-quark", 19, "Operation was cancelled", stage: .connect)
        XCTAssertEqual(error.kind, .timeout)
        XCTAssertEqual(error.message.hasPrefix("the Secret Service did not answer within 5 s"), true, error.message)
        XCTAssertEqual(failure("g-io-error-quark", 24, "Timeout was reached").kind, .timeout)
    }

    func testNoProviderIsUnavailable() {
        let unknown = failure(
            "g-dbus-error-quark", 2, remote: "org.freedesktop.DBus.Error.ServiceUnknown",
            "The name org.freedesktop.secrets was not provided by any .service files")
        XCTAssertEqual(unknown.kind, .unavailable)
        XCTAssertTrue(
            unknown.message.contains("no Secret Service provider (org.freedesktop.secrets) on the session bus"))
        XCTAssertTrue(unknown.message.contains("gnome-keyring-daemon --start --components=secrets"))
        XCTAssertEqual(failure("g-dbus-error-quark", 3).kind, .unavailable)  // NameHasNoOwner
        XCTAssertEqual(failure("other", 0, remote: "org.freedesktop.DBus.Error.NameHasNoOwner").kind, .unavailable)
        XCTAssertEqual(
            failure("g-dbus-error-quark", 0, remote: "org.freedesktop.DBus.Error.Spawn.ChildExited").kind,
            .unavailable)
    }

    func testConnectFailureIsUnavailable() {
        let error = failure("g-io-error-quark", 1, "Could not connect: No such file or directory", stage: .connect)
        XCTAssertEqual(error.kind, .unavailable)
        XCTAssertTrue(error.message.contains("cannot connect to the D-Bus session bus (Could not connect"))
        XCTAssertEqual(
            failure(
                "g-io-error-quark", 0, "Cannot autolaunch D-Bus without X11 $DISPLAY",
                stage: .connect
            ).kind, .unavailable)
    }

    func testLockedIsLocked() {
        XCTAssertEqual(failure("secret-error", 2, "Cannot create an item in a locked collection").kind, .locked)
        XCTAssertEqual(failure("g-dbus-error-quark", 0, remote: "org.freedesktop.Secret.Error.IsLocked").kind, .locked)
        let message = failure("x", 0, "Cannot create an item in a locked collection").message
        XCTAssertTrue(message.contains("the keyring is locked and cannot be unlocked without a prompt"), message)
        XCTAssertTrue(message.contains("gnome-keyring-daemon --unlock"), message)
    }

    func testMissingDefaultCollectionIsLocked() {
        let error = failure(
            "g-dbus-error-quark", 19, remote: "org.freedesktop.DBus.Error.UnknownMethod",
            "Object does not exist at path “/org/freedesktop/secrets/collection/login”")
        XCTAssertEqual(error.kind, .locked)
        XCTAssertTrue(error.message.contains("no default keyring"), error.message)
    }

    func testAnythingElseFailsWithLibsecretsMessage() {
        let error = failure("secret-error", 1, "received an invalid or unencryptable secret")
        XCTAssertEqual(error.kind, .failed)
        XCTAssertEqual(error.message, "the Secret Service failed: received an invalid or unencryptable secret")
    }

    func testTimeoutMessageShowsFractions() {
        XCTAssertTrue(SecretServiceMessages.timeout(2.5).contains("within 2.5 s"))
        XCTAssertTrue(SecretServiceMessages.timeout(5).contains("within 5 s"))
    }
}

final class SessionBusCheckTests: XCTestCase {
    func testAddressMeansABusMayExist() {
        XCTAssertTrue(SecretServiceStore.sessionBusMayExist(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/x"]))
        XCTAssertFalse(SecretServiceStore.sessionBusMayExist(environment: ["DBUS_SESSION_BUS_ADDRESS": ""]))
        XCTAssertFalse(SecretServiceStore.sessionBusMayExist(environment: [:]))
    }

    func testRuntimeDirBusMustBeASocket() throws {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("authctl-xdg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let env = ["XDG_RUNTIME_DIR": dir.path]
        XCTAssertFalse(SecretServiceStore.sessionBusMayExist(environment: env))
        _ = FileManager.default.createFile(atPath: dir.appendingPathComponent("bus").path, contents: Data())
        XCTAssertFalse(SecretServiceStore.sessionBusMayExist(environment: env), "a regular file is not a bus")
        try FileManager.default.removeItem(at: dir.appendingPathComponent("bus"))
        let listener = try SilentUnixListener(path: dir.appendingPathComponent("bus").path)
        defer { listener.close() }
        XCTAssertTrue(SecretServiceStore.sessionBusMayExist(environment: env))
    }

    func testNoBusThrowsUnavailableFast() {
        let store = SecretServiceStore(timeout: 5, environment: ["XDG_RUNTIME_DIR": "/nonexistent"])
        let start = Date()
        XCTAssertThrowsError(try store.read(SecretKey(kind: "session", profile: "p"))) { error in
            XCTAssertEqual((error as? SecureStoreError)?.kind, .unavailable)
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5)
    }
}

final class InMemorySecretStoreTests: XCTestCase {
    func testBehavesLikeTheSecretService() throws {
        let store = InMemorySecretStore()
        let key = SecretKey(kind: "session", profile: "default", userPoolId: "eu-west-1_A", clientId: "c")
        XCTAssertNil(try store.read(key))
        try store.write(key, label: "one", secret: "1")
        try store.write(
            SecretKey(kind: "session", profile: "default", userPoolId: "eu-west-1_B", clientId: "d"),
            label: "two", secret: "2")
        XCTAssertEqual(try store.read(SecretKey(kind: "session", profile: "default")), "2")
        XCTAssertEqual(store.items.count, 1)
        XCTAssertEqual(store.item(key)?.label, "two")
        XCTAssertEqual(store.item(key)?.key.userPoolId, "eu-west-1_B")
        XCTAssertNil(try store.read(SecretKey(kind: "client-secret", profile: "default")))
        XCTAssertTrue(try store.delete(key))
        XCTAssertFalse(try store.delete(key))
    }

    func testKeysListsOneProfile() throws {
        let store = InMemorySecretStore()
        try store.write(SecretKey(kind: "session", profile: "a", clientId: "c"), label: "l", secret: "1")
        try store.write(SecretKey(kind: "device", profile: "a"), label: "l", secret: "2")
        try store.write(SecretKey(kind: "session", profile: "b"), label: "l", secret: "3")
        XCTAssertEqual(
            try store.keys(profile: "a"),
            [SecretKey(kind: "device", profile: "a"), SecretKey(kind: "session", profile: "a", clientId: "c")])
        store.error = SecureStoreError(kind: .unavailable, message: "no bus")
        XCTAssertThrowsError(try store.keys(profile: "a"))
    }

    func testInjectedErrorIsThrownByEveryCall() {
        let store = InMemorySecretStore()
        store.error = SecureStoreError(kind: .unavailable, message: "no bus")
        let key = SecretKey(kind: "session", profile: "p")
        XCTAssertThrowsError(try store.read(key))
        XCTAssertThrowsError(try store.write(key, label: "l", secret: "s"))
        XCTAssertThrowsError(try store.delete(key))
        store.error = nil
        XCTAssertNoThrow(try store.write(key, label: "l", secret: "s"))
    }

    func testThreadSafety() {
        let store = InMemorySecretStore()
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let key = SecretKey(kind: "session", profile: "p\(index % 10)")
            try? store.write(key, label: "l", secret: "\(index)")
            _ = try? store.read(key)
        }
        XCTAssertEqual(store.items.count, 10)
    }
}

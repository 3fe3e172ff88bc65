import Foundation
import XCTest

@testable import SecureStore

/// KernelKeyringStore against the real kernel key retention service, checked with the real
/// `keyctl` (keyutils). Each test has a namespace of its own and removes its keys afterwards.
/// Where keyctl is blocked (a container's seccomp profile) every test is skipped, saying so.
final class KernelKeyringStoreTests: XCTestCase {
    var namespaces: [String] = []
    var keyctlPath: String!

    override func setUpWithError() throws {
        keyctlPath = try Tools.find("keyctl", package: "keyutils")
    }

    override func tearDown() {
        for namespace in namespaces {
            let store = KernelKeyringStore(namespace: namespace)
            for profile in ["p", "q"] {
                for key in (try? store.keys(profile: profile)) ?? [] { _ = try? store.delete(key) }
            }
        }
        super.tearDown()
    }

    /// A store in a fresh namespace; skips the test when keyctl is blocked here.
    func makeStore() throws -> KernelKeyringStore {
        let namespace = "test-\(UUID().uuidString.prefix(8))"
        namespaces.append(namespace)
        let store = KernelKeyringStore(namespace: namespace)
        do {
            _ = try store.persistence
        } catch let error as SecureStoreError where error.cause == .blocked {
            throw XCTSkip("the kernel keyring cannot be tested here: \(error.message)")
        }
        return store
    }

    func keyctl(_ arguments: [String]) throws -> Tools.Output {
        try Tools.run(keyctlPath, arguments, environment: ProcessInfo.processInfo.environment, timeout: 20)
    }

    /// The key id `keyctl` finds for `description`, from a fresh session keyring that is given
    /// the persistent keyring (or from the user keyring), as another process of the user would.
    func keyctlSearch(_ store: KernelKeyringStore, _ description: String) throws -> String? {
        let output: Tools.Output
        if case .persistent = try store.persistence {
            output = try keyctl([
                "session", "-", "/bin/sh", "-c",
                "\"$1\" get_persistent @s >/dev/null && \"$1\" search @s user \"$2\"",
                "sh", keyctlPath, description,
            ])
        } else {
            output = try keyctl(["search", "@u", "user", description])
        }
        let id = output.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        return output.status == 0 && !id.isEmpty ? id : nil
    }

    func session(_ profile: String = "p", client: String = "client1") -> SecretKey {
        SecretKey(kind: "session", profile: profile, userPoolId: "eu-west-1_AbC", clientId: client)
    }

    func testWriteReadReplaceDeleteAsKeyctlSeesThem() throws {
        let store = try makeStore()
        let key = session()
        let description = store.description(kind: "session", profile: "p")
        XCTAssertNil(try store.read(key))
        XCTAssertNil(try keyctlSearch(store, description))

        try store.write(key, label: "authctl session", secret: "{\"token\":\"one\"}")
        XCTAssertEqual(try store.read(key), "{\"token\":\"one\"}")
        let id = try XCTUnwrap(try keyctlSearch(store, description), "keyctl does not find the key")
        let printed = try keyctl(["print", id])
        XCTAssertEqual(printed.status, 0, printed.all)
        XCTAssertTrue(printed.stdout.contains("\"secret\":\"{\\\"token\\\":\\\"one\\\"}\""), printed.stdout)
        XCTAssertTrue(printed.stdout.contains("\"clientId\":\"client1\""), printed.stdout)

        // add_key updates the key in place: same id, new payload.
        try store.write(key, label: "authctl session", secret: "two")
        XCTAssertEqual(try store.read(key), "two")
        XCTAssertEqual(try keyctlSearch(store, description), id)
        XCTAssertTrue(try keyctl(["print", id]).stdout.contains("\"secret\":\"two\""))
        XCTAssertNil(try store.read(session(client: "another-client")), "a read for another client finds nothing")
        XCTAssertEqual(try store.read(SecretKey(kind: "session", profile: "p")), "two")

        XCTAssertTrue(try store.delete(key))
        XCTAssertNil(try store.read(key))
        XCTAssertNil(try keyctlSearch(store, description), "keyctl still finds the deleted key")
        XCTAssertFalse(try store.delete(key))
    }

    func testKeysListsTheProfilesItemsOnly() throws {
        let store = try makeStore()
        try store.write(
            SecretKey(kind: "session", profile: "p", userPoolId: "pool", clientId: "c1"), label: "l", secret: "1")
        try store.write(
            SecretKey(kind: "client-secret", profile: "p", userPoolId: "pool", clientId: "c1"), label: "l", secret: "2")
        try store.write(SecretKey(kind: "device", profile: "p"), label: "l", secret: "3")
        try store.write(SecretKey(kind: "session", profile: "q"), label: "l", secret: "4")
        XCTAssertEqual(
            try store.keys(profile: "p"),
            [
                SecretKey(kind: "client-secret", profile: "p", userPoolId: "pool", clientId: "c1"),
                SecretKey(kind: "device", profile: "p"),
                SecretKey(kind: "session", profile: "p", userPoolId: "pool", clientId: "c1"),
            ])
        XCTAssertEqual(try store.keys(profile: "q").map(\.kind), ["session"])
        XCTAssertEqual(try store.keys(profile: "none"), [])
    }

    func testTwoNamespacesNeverSeeEachOther() throws {
        let first = try makeStore()
        let second = try makeStore()
        try first.write(session(), label: "l", secret: "first")
        XCTAssertNil(try second.read(session()))
        XCTAssertEqual(try second.keys(profile: "p"), [])
        try second.write(session(), label: "l", secret: "second")
        XCTAssertEqual(try first.read(session()), "first")
        XCTAssertEqual(try second.read(session()), "second")
        XCTAssertTrue(try second.delete(session()))
        XCTAssertEqual(try first.read(session()), "first")
        // Names that would run together without escaping stay apart.
        let colon = KernelKeyringStore(namespace: first.namespace + ":session")
        XCTAssertNil(try colon.read(SecretKey(kind: "p", profile: "")))
        XCTAssertNotEqual(first.description(kind: "a:b", profile: "c"), first.description(kind: "a", profile: "b:c"))
    }

    func testPermissionsAreForTheOwnerOnly() throws {
        let store = try makeStore()
        try store.write(session(), label: "l", secret: "s")
        let id = try XCTUnwrap(try keyctlSearch(store, store.description(kind: "session", profile: "p")))
        let described = try keyctl(["rdescribe", id])
        XCTAssertEqual(described.status, 0, described.all)
        // type;uid;gid;perm;description: possessor and user all, group and other nothing.
        let fields = described.stdout.split(separator: ";", maxSplits: 4).map(String.init)
        XCTAssertEqual(fields.first, "user")
        XCTAssertEqual(fields.count > 3 ? fields[3] : "", "3f3f0000", described.stdout)
        XCTAssertEqual(fields.count > 1 ? fields[1] : "", String(getuid()))
    }

    func testAnItemTooLargeForAKernelKeyIsRefusedClearly() throws {
        let store = try makeStore()
        let big = String(repeating: "x", count: KernelKeyringStore.maximumPayloadBytes)
        XCTAssertThrowsError(try store.write(session(), label: "l", secret: big)) { error in
            let error = error as? SecureStoreError
            XCTAssertEqual(error?.cause, .tooLarge)
            XCTAssertTrue(error?.message.contains("32767") == true, error?.message ?? "")
            XCTAssertFalse(error?.message.contains(big) == true)
        }
        XCTAssertNil(try store.read(session()))
    }

    func testPersistenceShowsTheKernelsExpiry() throws {
        let store = try makeStore()
        switch try store.persistence {
        case .persistent(let seconds):
            let text = try String(contentsOfFile: "/proc/sys/kernel/keys/persistent_keyring_expiry", encoding: .utf8)
            XCTAssertEqual(seconds, Int(text.trimmingCharacters(in: .whitespacesAndNewlines)))
        case .userKeyring:
            XCTAssertEqual(
                try keyctl(["get_persistent", "@s"]).status != 0, true,
                "the store fell back to the user keyring although keyctl reaches the persistent one")
        }
        let missing = KernelKeyringStore(namespace: store.namespace, expiryPath: "/nonexistent")
        if case .persistent(let seconds) = try missing.persistence { XCTAssertNil(seconds) }
    }

    func testBlockedKeyctlSaysSoAndNamesTheFileStore() {
        for code in [EPERM, ENOSYS] {
            let error = KernelKeyringStore.failure("KEYCTL_GET_PERSISTENT", errno: code)
            XCTAssertEqual(error.cause, .blocked)
            XCTAssertEqual(error.kind, .unavailable)
            XCTAssertTrue(error.message.contains("keyctl is blocked"), error.message)
            XCTAssertTrue(error.message.contains("seccomp"), error.message)
            XCTAssertTrue(error.message.contains("--store file"), error.message)
        }
        XCTAssertNil(KernelKeyringStore.failure("add_key", errno: EINVAL).cause)
    }
}

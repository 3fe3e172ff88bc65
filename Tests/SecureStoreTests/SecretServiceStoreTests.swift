import Foundation
import SecureStore
import Synchronization
import XCTest

/// SecretServiceStore against a real gnome-keyring-daemon on a private session bus, under a
/// temporary HOME. Started once per process: libsecret caches its Secret Service connection
/// for the life of the process, so the bus address must be in the environment before the
/// first libsecret call and must not change afterwards.
final class SecretServiceStoreTests: XCTestCase {
    // Set in class setUp and read in class tearDown and the tests, which XCTest runs one after
    // another on one thread.
    nonisolated(unsafe) static var service: PrivateSecretService?
    nonisolated(unsafe) static var setupFailure: String?
    nonisolated(unsafe) static var savedEnvironment: [String: String?] = [:]
    static let managedVariables = [
        "DBUS_SESSION_BUS_ADDRESS", "HOME", "XDG_DATA_HOME",
        "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR",
    ]

    override class func setUp() {
        super.setUp()
        do {
            let service = try PrivateSecretService(name: "suite")
            self.service = service
            try service.startKeyring(password: "pw")
            for name in managedVariables {
                savedEnvironment[name] = ProcessInfo.processInfo.environment[name]
                setenv(name, service.environment[name]!, 1)
            }
        } catch {
            setupFailure = "could not start a private Secret Service: \(error)"
        }
    }

    override class func tearDown() {
        service?.stop()
        service = nil
        for (name, value) in savedEnvironment {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
        super.tearDown()
    }

    var service: PrivateSecretService!
    var store: SecretServiceStore!

    override func setUpWithError() throws {
        if let failure = Self.setupFailure {
            XCTFail(failure)
            throw Tools.Missing(description: failure)
        }
        service = Self.service
        store = SecretServiceStore(timeout: 10, environment: service.environment)
    }

    /// A profile name of its own for each test, so tests never see each other's items.
    func uniqueProfile(_ function: String = #function) -> String {
        "\(function.prefix { $0 != "(" })-\(UUID().uuidString.prefix(8))"
    }

    func session(_ profile: String, pool: String = "eu-west-1_AbCdEf123", client: String = "client1") -> SecretKey {
        SecretKey(kind: "session", profile: profile, userPoolId: pool, clientId: client)
    }

    /// Items with `kind` session and `profile` as secret-tool sees them.
    func itemCount(profile: String, kind: String = "session") throws -> Int {
        let output = try service.secretToolSearch(["kind": kind, "profile": profile])
        return output.stdout.split(separator: "\n").filter { $0.hasPrefix("[/") }.count
    }

    // MARK: - Round trips

    func testWriteThenReadRoundTrips() throws {
        let key = session(uniqueProfile())
        let secret = #"{"accessToken":"a.b.c","refreshToken":"r","expiresAt":"2030-01-01T00:00:00Z"}"#
        try store.write(key, label: "authctl session test", secret: secret)
        XCTAssertEqual(try store.read(key), secret)
    }

    func testReadIgnoresThePoolAndNarrowsByAGivenClient() throws {
        let profile = uniqueProfile()
        try store.write(session(profile, pool: "eu-west-1_One", client: "c1"), label: "l", secret: "s1")
        XCTAssertEqual(try store.read(SecretKey(kind: "session", profile: profile)), "s1")
        XCTAssertEqual(try store.read(session(profile, pool: "us-east-1_Other", client: "c1")), "s1")
        // A client secret kept for one app client is not another client's.
        XCTAssertNil(try store.read(session(profile, pool: "eu-west-1_One", client: "zz")))
    }

    func testKeysListsTheProfilesItemsWithTheirAttributes() throws {
        let profile = uniqueProfile()
        let other = uniqueProfile()
        XCTAssertEqual(try store.keys(profile: profile), [])
        try store.write(session(profile, pool: "eu-west-1_One", client: "c1"), label: "l", secret: "s1")
        try store.write(
            SecretKey(kind: "client-secret", profile: profile, userPoolId: "eu-west-1_One", clientId: "c1"),
            label: "l", secret: "s2")
        try store.write(session(other), label: "l", secret: "s3")
        XCTAssertEqual(
            try store.keys(profile: profile),
            [
                SecretKey(kind: "client-secret", profile: profile, userPoolId: "eu-west-1_One", clientId: "c1"),
                session(profile, pool: "eu-west-1_One", client: "c1"),
            ])
        XCTAssertEqual(try store.keys(profile: other).map(\.kind), ["session"])
    }

    func testReadOfMissingKeyIsNil() throws {
        XCTAssertNil(try store.read(session(uniqueProfile())))
    }

    func testUnicodeAndEmptySecretsRoundTrip() throws {
        let profile = uniqueProfile()
        let unicode = "pässwörd ✓ 日本語 \u{1F510} \"quoted\" \\ back"
        try store.write(session(profile), label: "unicode – label ✓", secret: unicode)
        XCTAssertEqual(try store.read(session(profile)), unicode)
        try store.write(session(profile), label: "empty", secret: "")
        XCTAssertEqual(try store.read(session(profile)), "")
    }

    func testLargeSecretRoundTrips() throws {
        let key = session(uniqueProfile())
        var json = "{\"blob\":\""
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
        while json.utf8.count < 64 * 1024 - 2 {
            json.append(alphabet[Int(generator.next() % UInt64(alphabet.count))])
        }
        json += "\"}"
        XCTAssertGreaterThanOrEqual(json.utf8.count, 64 * 1024)
        try store.write(key, label: "authctl large", secret: json)
        XCTAssertEqual(try store.read(key), json)
    }

    func testEmptyPoolAndClientAttributesWork() throws {
        let key = SecretKey(kind: "client-secret", profile: uniqueProfile())
        try store.write(key, label: "authctl client secret", secret: "shh")
        XCTAssertEqual(try store.read(key), "shh")
        XCTAssertEqual(try itemCount(profile: key.profile, kind: "client-secret"), 1)
        XCTAssertTrue(try store.delete(key))
    }

    // MARK: - Replacing

    func testWriteTwiceReplacesTheItem() throws {
        let key = session(uniqueProfile())
        try store.write(key, label: "first", secret: "one")
        try store.write(key, label: "second", secret: "two")
        XCTAssertEqual(try store.read(key), "two")
        XCTAssertEqual(try itemCount(profile: key.profile), 1)
        let search = try service.secretToolSearch(["kind": "session", "profile": key.profile])
        XCTAssertTrue(search.stdout.contains("label = second"), search.all)
    }

    func testWriteWithOtherPoolOrClientReplacesTheItem() throws {
        let profile = uniqueProfile()
        try store.write(session(profile, pool: "eu-west-1_First", client: "c1"), label: "one", secret: "1")
        try store.write(session(profile, pool: "eu-west-1_Second", client: "c1"), label: "two", secret: "2")
        XCTAssertEqual(try itemCount(profile: profile), 1)
        XCTAssertEqual(try store.read(SecretKey(kind: "session", profile: profile)), "2")
        try store.write(session(profile, pool: "eu-west-1_Second", client: "c2"), label: "three", secret: "3")
        XCTAssertEqual(try itemCount(profile: profile), 1)
        XCTAssertEqual(try store.read(SecretKey(kind: "session", profile: profile)), "3")
        let search = try service.secretToolSearch(["kind": "session", "profile": profile])
        XCTAssertTrue(search.stderr.contains("attribute.user_pool_id = eu-west-1_Second"), search.all)
        XCTAssertTrue(search.stderr.contains("attribute.client_id = c2"), search.all)
        XCTAssertFalse(search.all.contains("eu-west-1_First"), search.all)
    }

    func testKindsAndProfilesAreIndependent() throws {
        let a = uniqueProfile()
        let b = uniqueProfile()
        try store.write(session(a), label: "a", secret: "secret-a")
        try store.write(session(b), label: "b", secret: "secret-b")
        let clientSecretA = SecretKey(
            kind: "client-secret", profile: a, userPoolId: "eu-west-1_AbCdEf123", clientId: "client1")
        try store.write(clientSecretA, label: "a client secret", secret: "client-a")
        XCTAssertEqual(try store.read(session(a)), "secret-a")
        XCTAssertEqual(try store.read(session(b)), "secret-b")
        XCTAssertEqual(try store.read(clientSecretA), "client-a")
        XCTAssertTrue(try store.delete(session(a)))
        XCTAssertNil(try store.read(session(a)))
        XCTAssertEqual(try store.read(session(b)), "secret-b")
        XCTAssertEqual(try store.read(clientSecretA), "client-a")
    }

    // MARK: - Deleting

    func testDeleteReturnsTrueThenFalse() throws {
        let key = session(uniqueProfile())
        try store.write(key, label: "to delete", secret: "x")
        XCTAssertTrue(try store.delete(key))
        XCTAssertFalse(try store.delete(key))
        XCTAssertNil(try store.read(key))
        XCTAssertEqual(try itemCount(profile: key.profile), 0)
    }

    func testDeleteMatchesKindAndProfileOnly() throws {
        let profile = uniqueProfile()
        try store.write(session(profile, pool: "eu-west-1_Stored", client: "stored"), label: "l", secret: "x")
        XCTAssertTrue(try store.delete(SecretKey(kind: "session", profile: profile)))
        XCTAssertEqual(try itemCount(profile: profile), 0)
    }

    // MARK: - What a person sees

    func testLabelSchemaAndAttributesAreVisibleToSecretTool() throws {
        let profile = uniqueProfile()
        let key = session(profile, pool: "eu-west-1_Visible1", client: "visibleclient")
        let label = "authctl session for profile \(profile) (eu-west-1_Visible1)"
        try store.write(key, label: label, secret: "{}")
        let search = try service.secretToolSearch(["kind": "session", "profile": profile])
        XCTAssertEqual(search.status, 0, search.all)
        XCTAssertTrue(search.stdout.contains("label = \(label)"), search.all)
        XCTAssertTrue(search.stdout.contains("schema = io.github.authctl.Secret"), search.all)
        XCTAssertTrue(search.stderr.contains("attribute.kind = session"), search.all)
        XCTAssertTrue(search.stderr.contains("attribute.profile = \(profile)"), search.all)
        XCTAssertTrue(search.stderr.contains("attribute.user_pool_id = eu-west-1_Visible1"), search.all)
        XCTAssertTrue(search.stderr.contains("attribute.client_id = visibleclient"), search.all)
    }

    func testSecretIsNotWrittenOutsideTheKeyring() throws {
        let profile = uniqueProfile()
        let marker = "marker-\(UUID().uuidString)"
        try store.write(session(profile), label: "marker", secret: marker)
        let home = service.home
        let keyrings = home.appendingPathComponent(".local/share/keyrings").path
        let enumerator = FileManager.default.enumerator(atPath: home.path)
        while let relative = enumerator?.nextObject() as? String {
            let path = home.appendingPathComponent(relative).path
            if path.hasPrefix(keyrings) { continue }
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            XCTAssertFalse(String(decoding: data, as: UTF8.self).contains(marker), "secret found in \(path)")
        }
    }

    // MARK: - Concurrency and time limits

    func testConcurrentUseFromSeveralThreads() throws {
        let profiles = (0..<8).map { "concurrent-\($0)-\(UUID().uuidString.prefix(8))" }
        let errors = Mutex<[String]>([])
        let store: SecretServiceStore = self.store
        let keys = profiles.map { session($0) }
        DispatchQueue.concurrentPerform(iterations: profiles.count) { index in
            let key = keys[index]
            do {
                try store.write(key, label: "concurrent \(index)", secret: "value-\(index)")
                let value = try store.read(key)
                if value != "value-\(index)" { throw Tools.Missing(description: "read \(value ?? "nil")") }
                if try !store.delete(key) { throw Tools.Missing(description: "delete returned false") }
            } catch {
                errors.withLock { $0.append("\(index): \(error)") }
            }
        }
        XCTAssertEqual(errors.withLock { $0 }, [])
    }

    func testATimedOutCallLeavesTheStoreUsable() throws {
        let key = session(uniqueProfile())
        try store.write(key, label: "before", secret: "still here")
        let impatient = SecretServiceStore(timeout: 0.000_001, environment: service.environment)
        let start = Date()
        XCTAssertThrowsError(try impatient.read(key)) { error in
            XCTAssertEqual((error as? SecureStoreError)?.kind, .timeout)
            XCTAssertTrue("\(error)".contains("did not answer within"), "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1)
        XCTAssertEqual(try store.read(key), "still here")
    }

    /// No session bus in `environment`: `.unavailable` at once, without calling libsecret
    /// (this process has a working bus in its real environment, so a libsecret call would
    /// have succeeded).
    func testNoSessionBusIsUnavailableWithoutCallingLibsecret() throws {
        let key = session(uniqueProfile())
        try store.write(key, label: "exists", secret: "x")
        let noBus = SecretServiceStore(timeout: 5, environment: [:])
        let start = Date()
        for operation in ["read", "write", "delete"] {
            XCTAssertThrowsError(
                try {
                    switch operation {
                    case "read": _ = try noBus.read(key)
                    case "write": try noBus.write(key, label: "l", secret: "never stored")
                    default: _ = try noBus.delete(key)
                    }
                }(), operation
            ) { error in
                let error = error as? SecureStoreError
                XCTAssertEqual(error?.kind, .unavailable)
                XCTAssertTrue(error?.message.contains("no D-Bus session bus") ?? false, error?.message ?? "")
                XCTAssertTrue(error?.message.contains("gnome-keyring-daemon") ?? false, error?.message ?? "")
                XCTAssertTrue(error?.message.contains("dbus-run-session") ?? false, error?.message ?? "")
            }
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 0.5)
        XCTAssertEqual(try store.read(key), "x")
    }
}

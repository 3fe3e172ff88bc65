import Foundation
import LocalFormats
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import authctl

/// Which store a profile uses (a request, the profile's recorded `store`, the default), how the
/// first kept item records it in config.toml, and `store migrate` (copy, record with a note,
/// remove, clear the note; resumed after an interruption), over in-memory stores and a real
/// config file in a temporary directory.
final class StorePinningTests: XCTestCase {
    private var configHome = ""
    private var stores: [StoreKind: InMemorySecretStore] = [:]

    override func setUpWithError() throws {
        configHome = NSTemporaryDirectory() + "authctl-pinning-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: configHome, withIntermediateDirectories: true)
        stores = Dictionary(uniqueKeysWithValues: StoreKind.allCases.map { ($0, InMemorySecretStore()) })
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: configHome)
    }

    private func environment(_ extra: [String: String] = [:]) -> [String: String] {
        ["XDG_CONFIG_HOME": configHome, "XDG_RUNTIME_DIR": testLockDirectory, "HOME": configHome].merging(extra) { $1 }
    }

    private func backend(option: StoreKind? = nil) -> StoreBackend {
        let stores = self.stores
        return StoreBackend(option: option) { kind, _ in stores[kind]! }
    }

    private func record(_ store: String?, migratingFrom: String? = nil, profile: String = "default") throws {
        try ConfigFile.update(path: ConfigFile.defaultPath(environment: environment())) { file in
            var entry = file.profiles[profile] ?? ProfileConfig()
            entry.store = store
            entry.storeMigratingFrom = migratingFrom
            file.profiles[profile] = entry
        }
    }

    private func recorded(_ profile: String = "default") throws -> ProfileConfig? {
        try ConfigFile.load(path: ConfigFile.defaultPath(environment: environment()), fresh: true).profiles[profile]
    }

    func testTheStoreAProfileUses() throws {
        // (recorded store, --store, AUTHCTL_STORE) -> the store used, or nil for a refusal (exit 78).
        let cases: [(recorded: StoreKind?, option: StoreKind?, variable: String?, expected: StoreKind?)] = [
            (nil, nil, nil, .secretService),
            (nil, .kernelKeyring, nil, .kernelKeyring),
            (nil, nil, "file", .file),
            (nil, .file, "kernel-keyring", .file),  // the flag wins over the variable
            (.file, nil, nil, .file),  // the record, whatever the default
            (.file, .file, nil, .file),
            (.file, .kernelKeyring, nil, nil),  // never a second, empty copy elsewhere
            (.kernelKeyring, nil, "secret-service", nil),
        ]
        for (index, row) in cases.enumerated() {
            try record(row.recorded?.rawValue)
            let env = environment(row.variable.map { [StoreKind.variable: $0] } ?? [:])
            let source = backend(option: row.option)
            if let expected = row.expected {
                XCTAssertEqual(try source.kind(of: "default", environment: env), expected, "case \(index)")
                XCTAssertEqual(source.isRecorded("default"), row.recorded != nil, "case \(index)")
            } else {
                XCTAssertThrowsError(try source.kind(of: "default", environment: env), "case \(index)") { error in
                    XCTAssertEqual((error as? AuthctlError)?.code, .configuration, "case \(index)")
                    XCTAssertTrue(
                        (error as? AuthctlError)?.message.contains("configure --store") == true
                            || (error as? AuthctlError)?.message.contains("store migrate") == true,
                        "case \(index): \(error)")
                }
            }
        }
    }

    func testTheFirstStoreItemRecordsTheStoreAndAnotherProcesssRecordStays() throws {
        let env = environment()
        let source = backend(option: .kernelKeyring)
        XCTAssertEqual(try source.kind(of: "ci", environment: env), .kernelKeyring)
        XCTAssertNil(try recorded("ci"))
        source.pin("ci", environment: env)
        XCTAssertEqual(try recorded("ci")?.store, "kernel-keyring")
        XCTAssertTrue(source.isRecorded("ci"))

        // Another process recorded the file store for "dev" after this one resolved it: the pin
        // (only if unset) leaves that record as it is.
        XCTAssertEqual(try source.kind(of: "dev", environment: env), .kernelKeyring)
        try record("file", profile: "dev")
        source.pin("dev", environment: env)
        XCTAssertEqual(try recorded("dev")?.store, "file")
        XCTAssertEqual(try recorded("ci")?.store, "kernel-keyring", "one profile's record leaves the others'")
    }

    private func seed(_ store: InMemorySecretStore, profile: String = "default") throws {
        try store.write(StoreItem.session.key(profile: profile), label: "s", secret: "{\"session\":1}")
        try store.write(StoreItem.clientSecret(clientId: "client1").key(profile: profile), label: "c", secret: "shh")
    }

    func testMigrateCopiesRecordsAndRemoves() throws {
        try seed(stores[.secretService]!)
        try seed(stores[.secretService]!, profile: "other")
        let source = backend()
        let outcome = try source.profile("default", environment: environment()).migrate(to: .file, deviceOf: nil)
        XCTAssertEqual(outcome.from, .secretService)
        XCTAssertEqual(Set(outcome.moved), ["session", "client-secret"])
        XCTAssertFalse(outcome.resumed)
        XCTAssertEqual(outcome.removalFailures, [])
        XCTAssertEqual(try stores[.file]!.read(StoreItem.session.key(profile: "default")), "{\"session\":1}")
        XCTAssertEqual(
            try stores[.file]!.read(StoreItem.clientSecret(clientId: "client1").key(profile: "default")), "shh")
        XCTAssertEqual(try stores[.secretService]!.keys(profile: "default"), [], "the old copies are removed")
        XCTAssertEqual(try stores[.secretService]!.keys(profile: "other").count, 2, "another profile's items stay")
        XCTAssertEqual(try recorded()?.store, "file")
        XCTAssertNil(try recorded()?.storeMigratingFrom, "the note is cleared once the old store is empty")
    }

    func testAnInterruptedMigrationIsFinishedByRunningItAgain() throws {
        // Interrupted after the copy and the record (with its note), before the old copies were removed.
        try seed(stores[.secretService]!)
        try seed(stores[.file]!)
        try record("file", migratingFrom: "secret-service")
        let outcome = try backend().profile("default", environment: environment()).migrate(to: .file, deviceOf: nil)
        XCTAssertTrue(outcome.resumed)
        XCTAssertEqual(outcome.from, .secretService)
        XCTAssertEqual(try stores[.secretService]!.keys(profile: "default"), [])
        XCTAssertEqual(try stores[.file]!.keys(profile: "default").count, 2)
        XCTAssertEqual(try recorded()?.store, "file")
        XCTAssertNil(try recorded()?.storeMigratingFrom)
    }

    func testMigrateToTheStoreInUseOnlyRecordsIt() throws {
        try seed(stores[.secretService]!)
        let outcome = try backend().profile("default", environment: environment()).migrate(
            to: .secretService, deviceOf: nil)
        XCTAssertNil(outcome.from)
        XCTAssertEqual(outcome.moved, [])
        XCTAssertEqual(try stores[.secretService]!.keys(profile: "default").count, 2)
        XCTAssertEqual(try recorded()?.store, "secret-service")
    }

    /// `authctl unlock` and `status` ask the store for its key-agent capability: the file store
    /// has one, the others none, and the error-naming wrapper passes it on.
    func testOnlyTheFileStoreOffersAKeyAgent() {
        let directory = NSTemporaryDirectory() + "authctl-agent-\(UUID().uuidString)"
        let file = AgeFileStore(directory: directory, passphrase: .fixed("unused"))
        XCTAssertTrue(file.keyAgent === file)
        XCTAssertEqual(file.keyAgent?.directory, directory)
        XCTAssertNil(InMemorySecretStore().keyAgent)
        XCTAssertTrue(ExplainedStore(file, kind: .file, profile: "default", recorded: false).keyAgent === file)
        XCTAssertNil(
            ExplainedStore(InMemorySecretStore(), kind: .kernelKeyring, profile: "p", recorded: false).keyAgent)
    }

    /// Every failed invocation leaves through one path: the message once (none when the report
    /// already said why), then the documented code.
    func testAFailedInvocationLeavesThroughOnePath() {
        let console = FakeConsole()
        XCTAssertEqual(CommandExit.failing(AuthctlError(.configuration, "bad"), console: console).rawValue, 78)
        XCTAssertEqual(CommandExit.failing(.reported(.someFailed), console: console).rawValue, 4)
        XCTAssertEqual(console.stderr, ["authctl: bad"])
    }
}

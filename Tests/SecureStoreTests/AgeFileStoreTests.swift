import Foundation
import Synchronization
import XCTest

@testable import SecureStore

/// Unit tests use scrypt at 2^10; `testAgeDecryptsWhatTheStoreWroteAtTheDefaultFactor` uses
/// age's default, 2^18, as the CLI does.
let testWorkFactor = 10

/// A scratch directory (0700) removed afterwards.
final class ScratchDirectory {
    let path: String
    init() throws {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent("authctl-age-\(UUID().uuidString.prefix(8))")
            .path
        try FileManager.default.createDirectory(
            atPath: path, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

/// Counts how often the passphrase is asked for.
final class CountingSource: Sendable {
    let calls = Mutex(0)
    let passphrase: String
    init(_ passphrase: String) { self.passphrase = passphrase }
    var source: PassphraseSource {
        PassphraseSource { [self] in
            calls.withLock { $0 += 1 }
            return (passphrase, .given)
        }
    }
    var count: Int { calls.withLock { $0 } }
}

/// Runs the real `age` in a pseudo-terminal (it reads passphrases only from a terminal) through
/// python3's pexpect.
enum AgeTool {
    static let script = """
        import os, sys, pexpect
        mode, source, target = sys.argv[1:4]
        passphrase = os.environ["AGE_TEST_PASSPHRASE"]
        args = ["-d", "-o", target, source] if mode == "decrypt" else ["-p", "-o", target, source]
        child = pexpect.spawn("age", args, timeout=120, encoding="utf-8")
        child.expect("Enter passphrase")
        child.sendline(passphrase)
        if mode == "encrypt":
            child.expect("Confirm passphrase")
            child.sendline(passphrase)
        child.expect(pexpect.EOF)
        child.close()
        sys.stdout.write(child.before or "")
        sys.exit(child.exitstatus if child.exitstatus is not None else 1)
        """

    static func run(_ mode: String, _ source: String, _ target: String, passphrase: String) throws -> Tools.Output {
        _ = try Tools.find("age", package: "age")
        let python = try Tools.find("python3", package: "python3 (and pip install pexpect)")
        var env = ProcessInfo.processInfo.environment
        env["AGE_TEST_PASSPHRASE"] = passphrase
        return try Tools.run(python, ["-c", script, mode, source, target], environment: env, timeout: 120)
    }
}

final class AgeFileStoreTests: XCTestCase {
    var scratch: ScratchDirectory!
    var directory: String { scratch.path + "/state/authctl" }

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    func store(_ passphrase: String = "correct horse", workFactor: Int = testWorkFactor) -> AgeFileStore {
        AgeFileStore(directory: directory, passphrase: .fixed(passphrase), workFactor: workFactor)
    }

    func key(_ kind: String = "session", profile: String = "default", client: String = "c1") -> SecretKey {
        SecretKey(kind: kind, profile: profile, userPoolId: "eu-west-1_AbC", clientId: client)
    }

    func bytes(_ path: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? -1
    }

    // MARK: - Round trips

    func testRoundTripReplaceDeleteAndTheLastDeleteRemovesTheFile() throws {
        let store = store()
        XCTAssertNil(try store.read(key()))
        XCTAssertEqual(try store.keys(profile: "default"), [])
        try store.write(key(), label: "session", secret: "{\"a\":1}")
        try store.write(key("client-secret"), label: "secret", secret: "s3cr3t")
        XCTAssertEqual(try store.read(key()), "{\"a\":1}")
        XCTAssertNil(try store.read(key(client: "other")))
        XCTAssertEqual(try store.keys(profile: "default"), [key("client-secret"), key()])

        // A fresh store (another process) reads the file.
        let other = self.store()
        XCTAssertEqual(try other.read(key("client-secret")), "s3cr3t")
        try other.write(key(), label: "session", secret: "{\"a\":2}")
        XCTAssertEqual(try store.read(key()), "{\"a\":2}", "the first store saw the other's write")

        XCTAssertTrue(try store.delete(key()))
        XCTAssertFalse(try store.delete(key()))
        XCTAssertTrue(FileManager.default.fileExists(atPath: store.path(profile: "default")))
        XCTAssertTrue(try store.delete(key("client-secret")))
        XCTAssertFalse(
            FileManager.default.fileExists(atPath: store.path(profile: "default")),
            "deleting the last item removes the file")
        XCTAssertEqual(try store.keys(profile: "default"), [])
    }

    func testPermissionsAndProfileFileNames() throws {
        let store = store()
        try store.write(key(profile: "../evil/prod"), label: "l", secret: "s")
        XCTAssertEqual(try mode(directory), 0o700)
        XCTAssertEqual(try mode(store.path(profile: "../evil/prod")), 0o600)
        XCTAssertEqual(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted(),
            ["%2E.%2Fevil%2Fprod.age", "%2E.%2Fevil%2Fprod.lock"])
        XCTAssertEqual(try mode(directory + "/%2E.%2Fevil%2Fprod.lock"), 0o600)
    }

    /// A new profile's file takes the header the directory's files share, read from those files:
    /// each is opened as the profile's own file is, so a link, a FIFO (which
    /// blocked the open for ever) or a file open to others is refused, naming it, and nothing is written.
    func testTheDirectorysOtherFilesAreOpenedAsAProfilesOwnFile() throws {
        try store().write(key(), label: "l", secret: "s")
        let other = directory + "/other.age"
        let refusals: [(make: () throws -> Void, cause: SecureStoreError.Cause, said: String)] = [
            (
                { try FileManager.default.createSymbolicLink(atPath: other, withDestinationPath: "default.age") },
                .insecure, "symbolic link"
            ),
            ({ XCTAssertEqual(mkfifo(other, 0o600), 0) }, .corrupted, "not a regular file"),
            (
                {
                    try FileManager.default.copyItem(atPath: self.store().path(profile: "default"), toPath: other)
                    chmod(other, 0o640)
                }, .insecure, "open to group or other"
            ),
        ]
        for (make, cause, said) in refusals {
            try make()
            XCTAssertThrowsError(try store().write(key(profile: "second"), label: "l", secret: "s")) { error in
                let error = error as? SecureStoreError
                XCTAssertEqual(error?.cause, cause, said)
                XCTAssertTrue(
                    error?.message.contains(other) == true && error?.message.contains(said) == true,
                    error?.message ?? "")
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: store().path(profile: "second")))
            unlink(other)
        }
        try store().write(key(profile: "second"), label: "l", secret: "s")
        XCTAssertEqual(AgeFileStore.profile(ofFile: store().path(profile: "../evil/prod")), "../evil/prod")
        XCTAssertNil(AgeFileStore.profile(ofFile: directory + "/a%2f.age"), "not a name the store makes")
    }

    func testAnOpenDirectoryIsRefused() throws {
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        XCTAssertThrowsError(try store().write(key(), label: "l", secret: "s")) { error in
            let error = error as? SecureStoreError
            XCTAssertEqual(error?.cause, .insecure)
            XCTAssertTrue(error?.message.contains("chmod 700") == true, error?.message ?? "")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory), [])
    }

    func testThePassphraseIsAskedForOnlyWhenAFileIsOpenedAndOnce() throws {
        let counting = CountingSource("pw")
        let store = AgeFileStore(directory: directory, passphrase: counting.source, workFactor: testWorkFactor)
        XCTAssertNil(try store.read(key()))
        XCTAssertEqual(try store.keys(profile: "default"), [])
        XCTAssertEqual(counting.count, 0, "no file, no passphrase")
        try store.write(key(), label: "l", secret: "1")
        try store.write(key("device"), label: "l", secret: "2")
        XCTAssertEqual(try store.read(key()), "1")
        XCTAssertEqual(counting.count, 1)
        XCTAssertEqual(store.passphraseOrigin, .given)
    }

    // MARK: - Refusals that leave the file untouched

    func testAWrongPassphraseIsRefusedAndTheFileUntouched() throws {
        try store("right").write(key(), label: "l", secret: "s")
        let path = store().path(profile: "default")
        let before = try bytes(path)
        let wrong = store("wrong")
        for attempt in [
            { _ = try wrong.read(self.key()) }, { try wrong.write(self.key("device"), label: "l", secret: "x") },
            { _ = try wrong.delete(self.key()) },
        ] {
            XCTAssertThrowsError(try attempt()) { error in
                let error = error as? SecureStoreError
                XCTAssertEqual(error?.cause, .wrongPassphrase)
                XCTAssertEqual(error?.kind, .locked)
                XCTAssertTrue(error?.message.contains(path) == true, error?.message ?? "")
            }
        }
        XCTAssertEqual(try bytes(path), before)
    }

    func testACorruptedOrTruncatedFileIsRefusedAndUntouched() throws {
        try store().write(key(), label: "l", secret: "s")
        let path = store().path(profile: "default")
        let good = try bytes(path)
        var flipped = good
        flipped[flipped.count - 20] ^= 0x01
        let damaged: [(String, Data)] = [
            ("a flipped payload bit", flipped),
            ("a truncated payload", good.prefix(good.count - 7)),
            ("a truncated header", good.prefix(60)),
            ("a lost final chunk", good.prefix(good.count - (good.count - headerLength(good) - 16))),
            ("not an age file", Data("{\"items\":[]}".utf8)),
            ("an empty file", Data()),
        ]
        for (name, content) in damaged {
            try content.write(to: URL(fileURLWithPath: path))
            let counting = CountingSource("correct horse")
            let fresh = AgeFileStore(directory: directory, passphrase: counting.source, workFactor: testWorkFactor)
            XCTAssertThrowsError(try fresh.read(key()), name) { error in
                XCTAssertEqual((error as? SecureStoreError)?.cause, .corrupted, "\(name): \(error)")
                XCTAssertTrue((error as? SecureStoreError)?.message.contains(path) == true, name)
            }
            XCTAssertThrowsError(try fresh.write(key("device"), label: "l", secret: "x"), name)
            XCTAssertThrowsError(try fresh.delete(key()), name)
            XCTAssertEqual(try bytes(path), content, "\(name): the file was changed")
        }
    }

    func headerLength(_ file: Data) -> Int {
        let text = [UInt8](file)
        let mark = Array("\n--- ".utf8)
        let start = (0..<text.count).first { Array(text[$0..<min($0 + mark.count, text.count)]) == mark }!
        return text[(start + 1)...].firstIndex(of: 0x0A)! + 1
    }

    // MARK: - Other processes

    func testConcurrentWritersOfDifferentItemsLoseNothing() throws {
        let writers = 4
        let items = 6
        let children = try (0..<writers).map { writer in
            try StoreChild.start(directory: directory, mode: "items", tag: "w\(writer)", count: items)
        }
        for child in children { XCTAssertEqual(child.wait(timeout: 120), 0, "a writer failed") }
        let kinds = try store().keys(profile: "default").map(\.kind)
        XCTAssertEqual(kinds.count, writers * items, "updates were lost: \(kinds)")
        for writer in 0..<writers {
            for item in 0..<items {
                XCTAssertEqual(
                    try store().read(SecretKey(kind: "w\(writer)-\(item)", profile: "default")), "value \(item)")
            }
        }
    }

    func testAWriterKilledMidWriteLeavesTheOldFileReadable() throws {
        try store().write(key("other"), label: "l", secret: "kept")
        for round in 0..<3 {
            let child = try StoreChild.start(directory: directory, mode: "loop", tag: "session", count: 100_000)
            // Killed after its first write (on a loaded machine the child's start alone can take
            // longer than a fixed delay), at a different point of a later write each round.
            let firstWrite = Date()
            while (try? store().read(SecretKey(kind: "session", profile: "default"))) == nil,
                Date().timeIntervalSince(firstWrite) < 30
            {
                usleep(20_000)
            }
            usleep(UInt32(50_000 + round * 150_000))
            child.kill(SIGKILL)
            XCTAssertEqual(child.wait(timeout: 10), 128 + SIGKILL)
            let fresh = store()
            XCTAssertEqual(try fresh.read(key("other")), "kept", "round \(round)")
            let value = try XCTUnwrap(
                try fresh.read(SecretKey(kind: "session", profile: "default")), "round \(round): the loop wrote nothing"
            )
            XCTAssertTrue(value.hasPrefix("value "), value)
        }
    }

    // MARK: - The real age

    func testAgeDecryptsWhatTheStoreWroteAtTheDefaultFactor() throws {
        let writer = store("a passphrase for age", workFactor: AgeFileStore.defaultWorkFactor)
        var start = Date()
        try writer.write(key(), label: "session", secret: "{\"refresh\":\"r\"}")
        let created = Date().timeIntervalSince(start)
        let path = writer.path(profile: "default")
        XCTAssertTrue(String(decoding: try bytes(path).prefix(80), as: UTF8.self).contains("-> scrypt "))
        XCTAssertTrue(String(decoding: try bytes(path).prefix(80), as: UTF8.self).contains(" 18\n"))

        start = Date()
        XCTAssertEqual(try store("a passphrase for age", workFactor: 10).read(key()), "{\"refresh\":\"r\"}")
        let unlocked = Date().timeIntervalSince(start)
        print(
            "AgeFileStore at 2^18: create \(String(format: "%.2f", created)) s, unlock \(String(format: "%.2f", unlocked)) s"
        )

        let out = scratch.path + "/plain.json"
        let result = try AgeTool.run("decrypt", path, out, passphrase: "a passphrase for age")
        XCTAssertEqual(result.status, 0, result.all)
        let plain = try String(contentsOfFile: out, encoding: .utf8)
        XCTAssertTrue(plain.contains("\"secret\":\"{\\\"refresh\\\":\\\"r\\\"}\""), plain)
        XCTAssertTrue(plain.contains("\"kind\":\"session\""), plain)

        let refused = try AgeTool.run("decrypt", path, scratch.path + "/wrong.json", passphrase: "not it")
        XCTAssertNotEqual(refused.status, 0, "age decrypted with a wrong passphrase")
    }

    func testTheStoreReadsWhatAgeEncrypted() throws {
        let document = """
            {"items":[{"clientId":"c1","kind":"session","label":"by hand","profile":"default","secret":"from age","userPoolId":"eu-west-1_AbC"}]}
            """
        let plain = scratch.path + "/doc.json"
        try document.write(toFile: plain, atomically: true, encoding: .utf8)
        let reader = store("typed into age")
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        let result = try AgeTool.run("encrypt", plain, reader.path(profile: "default"), passphrase: "typed into age")
        XCTAssertEqual(result.status, 0, result.all)
        // age writes 0644: read only once it is the user's alone, as every file of the store.
        XCTAssertThrowsError(try reader.read(key())) { error in
            XCTAssertEqual((error as? SecureStoreError)?.cause, .insecure)
        }
        XCTAssertEqual(chmod(reader.path(profile: "default"), 0o600), 0)
        XCTAssertEqual(try reader.read(key()), "from age")
        // And it keeps working: a write keeps age's header and age still opens the result.
        try reader.write(key("device"), label: "l", secret: "added")
        XCTAssertEqual(try store("typed into age").read(key("device")), "added")
        XCTAssertThrowsError(try store("not typed").read(key())) { error in
            XCTAssertEqual((error as? SecureStoreError)?.cause, .wrongPassphrase)
        }
    }
}

/// A child process (this test binary running `StoreChildEntry`) that writes to a file store,
/// for the tests of concurrent writers and of a writer killed mid-write.
enum StoreChild {
    static func start(directory: String, mode: String, tag: String, count: Int) throws -> Child {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var env = ProcessInfo.processInfo.environment
        env["AUTHCTL_STORE_CHILD"] = [directory, mode, tag, String(count)].joined(separator: "\n")
        return try Child(
            executable, ["SecureStoreTests.StoreChildEntry/testChild"], environment: env,
            stdin: "/dev/null", stdout: "/dev/null", stderr: "/dev/null")
    }
}

/// Not a test on its own: the entry point of `StoreChild`. Skipped when run in the suite.
final class StoreChildEntry: XCTestCase {
    func testChild() throws {
        guard let spec = ProcessInfo.processInfo.environment["AUTHCTL_STORE_CHILD"] else {
            throw XCTSkip("subprocess entry point for the file store's multi-process tests")
        }
        let parts = spec.split(separator: "\n").map(String.init)
        let store = AgeFileStore(directory: parts[0], passphrase: .fixed("correct horse"), workFactor: testWorkFactor)
        let count = Int(parts[3]) ?? 1
        for index in 0..<count {
            if parts[1] == "items" {
                try store.write(
                    SecretKey(kind: "\(parts[2])-\(index)", profile: "default"), label: "l", secret: "value \(index)")
            } else {
                try store.write(SecretKey(kind: parts[2], profile: "default"), label: "l", secret: "value \(index)")
            }
        }
    }
}

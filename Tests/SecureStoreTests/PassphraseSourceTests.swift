import Foundation
import XCTest

@testable import SecureStore

/// The order of the file store's passphrase sources, and what each refuses.
final class PassphraseSourceTests: XCTestCase {
    var scratch: ScratchDirectory!

    override func setUpWithError() throws {
        scratch = try ScratchDirectory()
    }

    func file(_ name: String, _ content: String) throws -> String {
        let path = scratch.path + "/" + name
        try content.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A pipe holding `content`, its writing end closed; returns the reading end.
    func pipeHolding(_ content: String) -> Int32 {
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        _ = content.utf8CString.withUnsafeBufferPointer { write(fds[1], $0.baseAddress, $0.count - 1) }
        close(fds[1])
        return fds[0]
    }

    func resolve(
        _ environment: [String: String], fd: Int32? = nil,
        prompt: (@Sendable () throws -> String?)? = nil
    ) throws -> (String, PassphraseOrigin) {
        let result = try PassphraseSource.standard(environment: environment, fileDescriptor: fd, prompt: prompt)
            .passphrase()
        return (result.passphrase, result.origin)
    }

    func testTheSourcesAreTriedInOrder() throws {
        let credentials = scratch.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try "from-credential\n".write(toFile: credentials + "/authctl-passphrase", atomically: true, encoding: .utf8)
        let passphraseFile = try file("passphrase", "from-file\r\n")
        var env = [
            "AUTHCTL_STORE_PASSPHRASE_FILE": passphraseFile, "CREDENTIALS_DIRECTORY": credentials,
            "AUTHCTL_STORE_PASSPHRASE": "from-variable",
        ]
        let prompt: @Sendable () throws -> String? = { "from-prompt" }

        let fd = pipeHolding("from-fd\n")
        XCTAssertTrue(try resolve(env, fd: fd, prompt: prompt) == ("from-fd", .fileDescriptor(fd)))
        XCTAssertEqual(fcntl(fd, F_GETFD), -1, "the descriptor is closed once read")
        XCTAssertTrue(try resolve(env, prompt: prompt) == ("from-file", .file(passphraseFile)))
        env["AUTHCTL_STORE_PASSPHRASE_FILE"] = nil
        XCTAssertTrue(
            try resolve(env, prompt: prompt) == ("from-credential", .credential(credentials + "/authctl-passphrase")))
        env["CREDENTIALS_DIRECTORY"] = scratch.path + "/no-credentials-here"
        XCTAssertTrue(try resolve(env, prompt: prompt) == ("from-variable", .environment))
        env["AUTHCTL_STORE_PASSPHRASE"] = nil
        XCTAssertTrue(try resolve(env, prompt: prompt) == ("from-prompt", .prompt))
    }

    func testNoSourceNamesThemAll() {
        for prompt in [nil, { nil } as (@Sendable () throws -> String?)] {
            XCTAssertThrowsError(try resolve([:], prompt: prompt)) { error in
                let error = error as? SecureStoreError
                XCTAssertEqual(error?.cause, .noPassphrase)
                XCTAssertEqual(error?.kind, .unavailable)
                for source in [
                    "--passphrase-fd", "AUTHCTL_STORE_PASSPHRASE_FILE", "authctl-passphrase",
                    "AUTHCTL_STORE_PASSPHRASE,", "terminal",
                ] {
                    XCTAssertTrue(
                        error?.message.contains(source) == true, "\(source) missing from \(error?.message ?? "")")
                }
            }
        }
    }

    func testBadSourcesAreRefusedNotSkipped() throws {
        let fallback = ["AUTHCTL_STORE_PASSPHRASE": "would be used"]
        let cases: [(String, [String: String], String)] = [
            ("missing file", ["AUTHCTL_STORE_PASSPHRASE_FILE": scratch.path + "/none"], "No such file"),
            ("directory", ["AUTHCTL_STORE_PASSPHRASE_FILE": scratch.path], "not a regular file"),
            ("empty file", ["AUTHCTL_STORE_PASSPHRASE_FILE": try file("empty", "\n")], "is empty"),
            (
                "huge file", ["AUTHCTL_STORE_PASSPHRASE_FILE": try file("huge", String(repeating: "x", count: 5000))],
                "longer than 4096"
            ),
            ("empty variable", ["AUTHCTL_STORE_PASSPHRASE": ""], "is empty"),
        ]
        for (name, env, expected) in cases {
            XCTAssertThrowsError(try resolve(env.merging(fallback) { first, _ in first }), name) { error in
                let error = error as? SecureStoreError
                XCTAssertEqual(error?.cause, .noPassphrase, name)
                XCTAssertTrue(error?.message.contains(expected) == true, "\(name): \(error?.message ?? "")")
            }
        }
    }

    func testTheSecretIsNeverInAMessage() throws {
        let path = try file("secret", String(repeating: "hunter2", count: 700))
        XCTAssertThrowsError(try resolve(["AUTHCTL_STORE_PASSPHRASE_FILE": path])) { error in
            XCTAssertFalse("\(error)".contains("hunter2"))
        }
    }
}

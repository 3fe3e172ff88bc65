import Crypto
import Foundation
import XCTest

@testable import SecureStore

/// The key agent's frame parser and its vault (the process side is tested end to end in
/// Tests/integration/test_agent.py).
final class KeyAgentTests: XCTestCase {
    let passphrase = Array("password".utf8)

    // MARK: - Frames

    func testFramesRoundTrip() throws {
        let message = AgentMessage(.add, [Array("/d".utf8), [], [1, 2, 3], AgentMessage.number(28_800)])
        let frame = message.encoded()
        XCTAssertEqual(try AgentMessage.parse(frame: frame), message)
        XCTAssertEqual(try AgentMessage.parse(frame: frame).number(3, "lifetime"), 28_800)
    }

    func testMalformedFramesAreRefused() {
        let good = AgentMessage(.status).encoded()
        var otherVersion = good
        otherVersion[4] = 2
        var unknownType = good
        unknownType[5] = 0x7F
        let pastTheEnd: [UInt8] = [0, 0, 0, 7, 1, 5, 0, 0, 0, 9, 1]
        let tooLong = AgentMessage.bigEndian(UInt32(AgentMessage.maximumFrameBytes + 1)) + [1, 5]
        let tooManyFields = AgentMessage(.status, Array(repeating: [], count: AgentMessage.maximumFields + 1)).encoded()
        for frame in [otherVersion, unknownType, pastTheEnd, tooLong, tooManyFields, Array(good.dropLast()), [0, 0]] {
            XCTAssertThrowsError(try AgentMessage.parse(frame: frame), "\(frame.prefix(12))")
        }
        XCTAssertThrowsError(try AgentMessage(.open, [Array("relative/path".utf8)]).path(0))
        XCTAssertThrowsError(try AgentMessage(.open, [[0x2F, 0x00]]).path(0))
    }

    // MARK: - The vault

    func testVaultOpensAndSealsWithTheKeyItWasGiven() throws {
        let vault = try KeyVault()
        let header = try AgeFormat.newHeader(passphrase: passphrase, workFactor: testWorkFactor)
        let file = try AgeFormat.encrypt(Array("secret document".utf8), header: header)
        XCTAssertNil(try vault.open(directory: "/d", file: file, now: 100), "nothing held yet")
        try vault.add(
            directory: "/d", header: header.bytes, fileKey: header.fileKey.bytes, lifetime: 3600, idle: 60, now: 100)
        XCTAssertEqual(try vault.open(directory: "/d", file: file, now: 101), Array("secret document".utf8))
        XCTAssertNil(try vault.open(directory: "/other", file: file, now: 101), "held for its directory only")

        // A new file sealed with the directory's header opens with the passphrase (as `age -d` would).
        let sealed = try XCTUnwrap(
            try vault.seal(directory: "/d", header: header.bytes, plaintext: Array("new".utf8), now: 102))
        let (reopened, start) = try AgeFormat.openHeader(sealed, passphrase: passphrase)
        XCTAssertEqual(try AgeFormat.decryptPayload(sealed, from: start, header: reopened), Array("new".utf8))
        XCTAssertNotEqual(
            Array(sealed[start..<(start + 16)]), Array(file[start..<(start + 16)]), "a fresh payload nonce")
    }

    func testVaultSealsOnlyWithTheHeaderItIsAskedForAndChecksExpiryWhenAKeyIsUsed() throws {
        let vault = try KeyVault()
        let header = try AgeFormat.newHeader(passphrase: passphrase, workFactor: testWorkFactor)
        let other = try AgeFormat.newHeader(passphrase: Array("another".utf8), workFactor: testWorkFactor)
        let file = try AgeFormat.encrypt([1, 2, 3], header: header)
        try vault.add(
            directory: "/d", header: header.bytes, fileKey: header.fileKey.bytes, lifetime: 10, idle: 10, now: 0)
        XCTAssertNil(try vault.seal(directory: "/d", header: other.bytes, plaintext: [1], now: 1), "not held")
        XCTAssertNil(try vault.seal(directory: "/d", header: [], plaintext: [1], now: 1), "no header: no pick")
        // No `expire` between: the key's time is checked at use (a slow request once outlived it).
        XCTAssertEqual(try vault.open(directory: "/d", file: file, now: 9), [1, 2, 3])
        XCTAssertNil(try vault.open(directory: "/d", file: file, now: 10))
        XCTAssertTrue(vault.isEmpty)
    }

    func testTheAgentReadsARequestInPlaceAsTheArrayParserDoes() throws {
        let message = AgentMessage(.add, [Array("/d".utf8), [9, 9], Array(repeating: 7, count: 16)])
        let frame = message.encoded()
        let body = try LockedBuffer(capacity: frame.count - 4)
        body.append(Array(frame[4...]))
        let request = try AgentRequest(body: body)
        XCTAssertEqual(request.kind, .add)
        XCTAssertEqual(try request.path(0), "/d")
        XCTAssertEqual(Array(try request.field(2, "file key", maximum: 16)), Array(repeating: 7, count: 16))
        XCTAssertThrowsError(try request.field(3, "lifetime"))
        let answer = try AgentRequest.frame(.ok, [[UInt8]("plain".utf8)])
        XCTAssertEqual(Array(answer.bytes), AgentMessage(.ok, [Array("plain".utf8)]).encoded())
    }

    func testVaultRefusesAKeyThatDoesNotOpenItsHeader() throws {
        let vault = try KeyVault()
        let header = try AgeFormat.newHeader(passphrase: passphrase, workFactor: testWorkFactor)
        XCTAssertThrowsError(
            try vault.add(
                directory: "/d", header: header.bytes, fileKey: [UInt8](repeating: 7, count: 16),
                lifetime: 3600, idle: 60, now: 0))
        XCTAssertTrue(vault.isEmpty)
    }

    func testVaultForgetsAfterIdleAndLifetimeAndOnLock() throws {
        let vault = try KeyVault()
        let header = try AgeFormat.newHeader(passphrase: passphrase, workFactor: testWorkFactor)
        let file = try AgeFormat.encrypt([1], header: header)
        try vault.add(
            directory: "/d", header: header.bytes, fileKey: header.fileKey.bytes, lifetime: 100, idle: 10, now: 0)
        _ = try vault.open(directory: "/d", file: file, now: 9)  // used: idle restarts
        vault.expire(now: 18)
        XCTAssertFalse(vault.isEmpty)
        vault.expire(now: 19)
        XCTAssertTrue(vault.isEmpty, "idle for 10 s")

        try vault.add(
            directory: "/d", header: header.bytes, fileKey: header.fileKey.bytes, lifetime: 20, idle: 10, now: 0)
        for now in stride(from: UInt64(5), through: 15, by: 5) {
            _ = try vault.open(directory: "/d", file: file, now: now)
        }
        vault.expire(now: 20)
        XCTAssertTrue(vault.isEmpty, "the lifetime ends it, used or not")

        try vault.add(
            directory: "/d", header: header.bytes, fileKey: header.fileKey.bytes, lifetime: 20, idle: 10, now: 0)
        vault.forgetAll()
        XCTAssertNil(try vault.open(directory: "/d", file: file, now: 1))
        XCTAssertTrue(vault.memoryLocked, "one page is within every default RLIMIT_MEMLOCK")
    }
}

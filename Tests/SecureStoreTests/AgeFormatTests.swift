import Crypto
import Foundation
import XCTest

@testable import SecureStore

/// The age v1 format: round trips over chunk boundaries, and the header grammar's refusals
/// (the cases of age's testkit, C2SP/CCTV age/internal/tests, rebuilt on our own files).
final class AgeFormatTests: XCTestCase {
    let passphrase = Array("password".utf8)

    func sealed(_ plaintext: [UInt8], workFactor: Int = testWorkFactor) throws -> [UInt8] {
        try AgeFormat.encrypt(plaintext, header: AgeFormat.newHeader(passphrase: passphrase, workFactor: workFactor))
    }

    func open(_ file: [UInt8], passphrase: [UInt8]? = nil) throws -> [UInt8] {
        let (header, start) = try AgeFormat.openHeader(file, passphrase: passphrase ?? self.passphrase)
        return try AgeFormat.decryptPayload(file, from: start, header: header)
    }

    func testRoundTripsAcrossChunkBoundaries() throws {
        for size in [0, 1, 65535, 65536, 65537, 2 * 65536] {
            let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            let file = try sealed(plaintext)
            XCTAssertEqual(try open(file), plaintext, "size \(size)")
            let chunks = max(1, (size + 65535) / 65536)
            let header = try AgeFormat.parseHeader(file).end
            XCTAssertEqual(file.count, header + 16 + size + 16 * chunks, "size \(size)")
        }
    }

    func testHeaderShape() throws {
        let file = try sealed(Array("x".utf8))
        let text = String(decoding: file[0..<(try AgeFormat.parseHeader(file).end)], as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines[0], "age-encryption.org/v1")
        XCTAssertTrue(lines[1].hasPrefix("-> scrypt "))
        XCTAssertEqual(lines[1].split(separator: " ").count, 4)
        XCTAssertEqual(lines[1].split(separator: " ")[3], "10")
        XCTAssertEqual(lines[2].count, 43, "a 32-byte body in one short line")
        XCTAssertTrue(lines[3].hasPrefix("--- "))
        XCTAssertEqual(lines[3].count, 47)
        XCTAssertFalse(text.contains("="))
    }

    func testWrongPassphrase() throws {
        XCTAssertThrowsError(try open(try sealed([1, 2, 3]), passphrase: Array("Password".utf8))) { error in
            XCTAssertEqual(error as? AgeFormat.Failure, .wrongPassphrase)
        }
    }

    /// `file` with its header's `line` (0-based) replaced.
    func replacingLine(_ file: [UInt8], _ line: Int, with text: String) -> [UInt8] {
        var lines = file.split(separator: 0x0A, maxSplits: 4, omittingEmptySubsequences: false).map(Array.init)
        lines[line] = Array(text.utf8)
        return Array(lines.joined(separator: [0x0A]))
    }

    func assertMalformed(_ file: [UInt8], _ expected: String, file source: StaticString = #filePath, line: UInt = #line)
    {
        XCTAssertThrowsError(try open(file), file: source, line: line) { error in
            guard case .malformed(let reason)? = error as? AgeFormat.Failure else {
                return XCTFail("\(expected): \(error)", file: source, line: line)
            }
            XCTAssertTrue(reason.contains(expected), "\(reason) does not say \(expected)", file: source, line: line)
        }
    }

    func testTheHeaderGrammarIsStrict() throws {
        let file = try sealed(Array("payload".utf8))
        let lines = file.split(separator: 0x0A, maxSplits: 4, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        let stanza = lines[1].split(separator: " ").map(String.init)  // ->, scrypt, salt, factor
        let salt = stanza[2]
        func withStanza(_ text: String) -> [UInt8] { replacingLine(file, 1, with: text) }

        assertMalformed(replacingLine(file, 0, with: "age-encryption.org/v2"), "not an age v1 file")
        assertMalformed(withStanza("-> scrypt \(salt) 018"), "leading zeros")
        assertMalformed(withStanza("-> scrypt \(salt) 0"), "leading zeros")
        assertMalformed(withStanza("-> scrypt \(salt) -1"), "leading zeros")
        assertMalformed(withStanza("-> scrypt \(salt) +10"), "leading zeros")
        assertMalformed(withStanza("-> scrypt \(salt) 0x10"), "leading zeros")
        assertMalformed(withStanza("-> scrypt \(salt) 20"), "above the limit 2^19")
        assertMalformed(withStanza("-> scrypt \(salt) 22"), "above the limit 2^19")
        assertMalformed(withStanza("-> scrypt \(salt) 99999999999999999999"), "leading zeros")
        assertMalformed(withStanza("-> scrypt \(salt)"), "exactly 2 arguments")
        assertMalformed(withStanza("-> scrypt \(salt) 10 extra"), "exactly 2 arguments")
        assertMalformed(withStanza("-> scrypt \(salt)== 10"), "salt is not canonical")
        assertMalformed(withStanza("-> scrypt \(salt.dropLast()) 10"), "salt is not canonical")
        assertMalformed(withStanza("-> scrypt \(salt)AA 10"), "salt is not canonical")
        assertMalformed(withStanza("-> scrypt  \(salt) 10"), "empty or non-printable argument")
        assertMalformed(withStanza("-> X25519 \(salt)"), "X25519 recipient")
        assertMalformed(withStanza("->scrypt \(salt) 10"), "neither a stanza nor the MAC")
        // A non-canonical salt: the last character's unused bits set.
        let last = salt.last!
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        let bumped = alphabet[alphabet.firstIndex(of: last)! + 1]
        assertMalformed(withStanza("-> scrypt \(salt.dropLast())\(bumped) 10"), "salt is not canonical")
        // The body: 32 bytes in one line shorter than 64 columns.
        assertMalformed(replacingLine(file, 2, with: lines[2] + "A"), "body is not 32 bytes")
        assertMalformed(replacingLine(file, 2, with: String(lines[2].dropLast(2))), "not canonical base64")
        // Two stanzas: scrypt must be alone.
        var doubled = Array(lines[0...2].joined(separator: "\n").utf8) + [0x0A]
        doubled += Array(lines[1...2].joined(separator: "\n").utf8) + [0x0A]
        doubled += Array(file[(lines[0...2].map { $0.utf8.count + 1 }.reduce(0, +))...])
        assertMalformed(doubled, "must be the only stanza")
        // The MAC line.
        assertMalformed(replacingLine(file, 3, with: lines[3] + " "), "MAC line is malformed")
        assertMalformed(replacingLine(file, 3, with: "---" + lines[3].dropFirst(4)), "MAC line is malformed")
        var mac = Array(lines[3].utf8)
        mac[10] = mac[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        assertMalformed(replacingLine(file, 3, with: String(decoding: mac, as: UTF8.self)), "header MAC does not match")
        assertMalformed(Array(file.prefix(30)), "header is truncated")
    }

    func testThePayloadMustEndWithAFinalChunk() throws {
        let plaintext = [UInt8](repeating: 7, count: 65536 + 10)
        let file = try sealed(plaintext)
        let start = try AgeFormat.parseHeader(file).end
        assertMalformed(Array(file.prefix(start + 16)), "no final chunk")
        assertMalformed(Array(file.prefix(start + 10)), "nonce is missing")
        assertMalformed(Array(file.prefix(start + 16 + 65536 + 16)), "final chunk does not authenticate")
        assertMalformed(Array(file.dropLast(1)), "final chunk does not authenticate")
        assertMalformed(file + [0], "final chunk does not authenticate")
        var altered = file
        altered[start + 16 + 100] ^= 0x80
        assertMalformed(altered, "chunk 0 does not authenticate")
        // An empty final chunk after a full one is refused even when it authenticates.
        let full = try AgeFormat.newHeader(passphrase: passphrase, workFactor: testWorkFactor)
        let whole = try AgeFormat.encrypt([UInt8](repeating: 1, count: 65536), header: full)
        let nonce = Array(whole[full.bytes.count..<(full.bytes.count + 16)])
        let key = AgeFormat.payloadKey(fileKey: full.fileKey, nonce: nonce)
        let first = try seal(
            [UInt8](repeating: 1, count: 65536), key: key, nonce: try AgeFormat.chunkNonce(0, last: false))
        let empty = try seal([], key: key, nonce: try AgeFormat.chunkNonce(1, last: true))
        assertMalformed(full.bytes + nonce + first + empty, "ends with an empty chunk")
    }

    func testUnpaddedBase64IsCanonical() {
        XCTAssertEqual(AgeFormat.base64([0xff]), "/w")
        XCTAssertEqual(AgeFormat.decodeBase64(Array("/w".utf8)), [0xff])
        XCTAssertNil(AgeFormat.decodeBase64(Array("/w==".utf8)))
        XCTAssertNil(AgeFormat.decodeBase64(Array("/x".utf8)), "unused bits set")
        XCTAssertNil(AgeFormat.decodeBase64(Array("A".utf8)))
        XCTAssertNil(AgeFormat.decodeBase64(Array("-_".utf8)), "URL-safe alphabet")
        XCTAssertEqual(AgeFormat.decodeBase64([]), [])
    }
}

/// One STREAM chunk, sealed by hand (for a file the store itself would never write).
private func seal(_ plaintext: [UInt8], key: SymmetricKey, nonce: ChaChaPoly.Nonce) throws -> [UInt8] {
    let box = try ChaChaPoly.seal(plaintext, using: key, nonce: nonce)
    return Array(box.ciphertext) + Array(box.tag)
}

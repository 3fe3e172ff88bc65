import Crypto
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The age file format v1 (age-encryption.org/v1, c2sp.org/age) with one scrypt recipient: what
/// `age -p` writes and `age -d` reads. Only the format is written here; the primitives are
/// swift-crypto's (scrypt, HKDF-SHA-256, HMAC-SHA-256, ChaCha20-Poly1305).
enum AgeFormat {
    /// age's default work factor (log2 of scrypt's N) when encrypting with a passphrase.
    static let defaultWorkFactor = 18
    /// The largest work factor accepted when decrypting: one step above the one authctl writes
    /// (512 MiB and about a second). age's own limit, 2^22, let a planted header cost 4 GiB and
    /// ~18 s before its MAC could refuse it, outside any --timeout.
    static let maximumWorkFactor = 19
    static let chunkSize = 64 * 1024
    static let tagSize = 16
    static let versionLine = "age-encryption.org/v1\n"
    static let scryptLabel = Array("age-encryption.org/v1/scrypt".utf8)

    /// Why a file could not be opened.
    enum Failure: Error, Equatable {
        /// Not an age file of the expected shape: `reason` says what is wrong.
        case malformed(String)
        /// The passphrase does not unwrap the file key.
        case wrongPassphrase
    }

    /// A parsed header with its file key: reused to rewrite the same file without scrypt.
    struct Header: Equatable {
        /// The header's bytes, MAC line included.
        var bytes: [UInt8]
        var fileKey: SymmetricKey
        var workFactor: Int

        static func == (a: Header, b: Header) -> Bool { a.bytes == b.bytes }
    }

    // MARK: - Encrypting

    /// A new header: a random file key, wrapped with `passphrase` at `workFactor`.
    static func newHeader(passphrase: [UInt8], workFactor: Int) throws -> Header {
        let fileKey = SymmetricKey(size: .bits128)
        let salt = randomBytes(16)
        let wrapKey = try scrypt(passphrase: passphrase, salt: salt, workFactor: workFactor)
        let sealed = try ChaChaPoly.seal(fileKey.bytes, using: wrapKey, nonce: ChaChaPoly.Nonce(data: zeroNonce))
        let body = base64(Array(sealed.ciphertext) + Array(sealed.tag))
        var text = versionLine + "-> scrypt \(base64(salt)) \(workFactor)\n"
        text += wrapped(body) + "---"
        let mac = headerMAC(Array(text.utf8), fileKey: fileKey)
        text += " " + base64(mac) + "\n"
        return Header(bytes: Array(text.utf8), fileKey: fileKey, workFactor: workFactor)
    }

    /// The whole file: `header`, a fresh payload nonce, `plaintext` in STREAM chunks.
    static func encrypt(_ plaintext: [UInt8], header: Header) throws -> [UInt8] {
        try plaintext.withUnsafeBytes { try encrypt($0, header: header) }
    }

    /// As above, reading the plaintext where it is (the agent's locked buffer) without a copy.
    static func encrypt(_ plaintext: UnsafeRawBufferPointer, header: Header) throws -> [UInt8] {
        let nonce = randomBytes(16)
        let payloadKey = payloadKey(fileKey: header.fileKey, nonce: nonce)
        var out = header.bytes + nonce
        out.reserveCapacity(out.count + plaintext.count + (plaintext.count / chunkSize + 1) * tagSize)
        var counter: UInt64 = 0
        var start = 0
        repeat {
            let end = min(start + chunkSize, plaintext.count)
            let last = end == plaintext.count
            let sealed = try ChaChaPoly.seal(
                UnsafeRawBufferPointer(rebasing: plaintext[start..<end]), using: payloadKey,
                nonce: try chunkNonce(counter, last: last))
            out += sealed.ciphertext
            out += sealed.tag
            counter += 1
            start = end
        } while start < plaintext.count
        return out
    }

    // MARK: - Decrypting

    /// Parses the header of `file` (the grammar is strict: anything else is `.malformed`),
    /// unwraps the file key with `passphrase` and checks the header's MAC. Returns the header and
    /// where the payload starts.
    static func openHeader(_ file: [UInt8], passphrase: [UInt8]) throws -> (Header, payloadStart: Int) {
        let parsed = try parseHeader(file)
        let wrapKey = try scrypt(passphrase: passphrase, salt: parsed.salt, workFactor: parsed.workFactor)
        let fileKey: [UInt8]
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: ChaChaPoly.Nonce(data: zeroNonce),
                ciphertext: parsed.body[0..<16], tag: parsed.body[16...])
            fileKey = Array(try ChaChaPoly.open(box, using: wrapKey))
        } catch {
            throw Failure.wrongPassphrase
        }
        let key = SymmetricKey(data: fileKey)
        return (try checkMAC(parsed, file: file, fileKey: key), parsed.end)
    }

    /// The header of `file` opened with an already known `header` (the same bytes): no scrypt.
    static func reopenHeader(_ file: [UInt8], known header: Header) throws -> (Header, payloadStart: Int)? {
        guard file.count >= header.bytes.count, Array(file[0..<header.bytes.count]) == header.bytes else { return nil }
        return (header, header.bytes.count)
    }

    /// Decrypts the payload of `file` from `start` (the 16-byte nonce, then the chunks).
    static func decryptPayload(_ file: [UInt8], from start: Int, header: Header) throws -> [UInt8] {
        var plaintext: [UInt8] = []
        try file.withUnsafeBytes { file in
            try decryptPayload(file, from: start, header: header) { chunk in plaintext += chunk }
        }
        return plaintext
    }

    /// The plaintext size of a payload of `payloadBytes` (nonce and tags included), for a buffer
    /// that must not grow; nil when no payload is that long.
    static func plaintextSize(payloadBytes: Int) -> Int? {
        let sealed = payloadBytes - 16
        guard sealed >= tagSize else { return nil }
        let chunks = (sealed + chunkSize + tagSize - 1) / (chunkSize + tagSize)
        return sealed - chunks * tagSize
    }

    /// Decrypts chunk by chunk, handing each plaintext chunk to `sink` (which may wipe it).
    static func decryptPayload(
        _ file: UnsafeRawBufferPointer, from start: Int, header: Header, into sink: (inout Data) -> Void
    ) throws {
        guard file.count - start >= 16 else { throw Failure.malformed("the payload nonce is missing") }
        let nonce = Array(file[start..<(start + 16)])
        let payloadKey = payloadKey(fileKey: header.fileKey, nonce: nonce)
        var position = start + 16
        guard position < file.count else { throw Failure.malformed("the payload has no final chunk") }
        var counter: UInt64 = 0
        let sealedChunk = chunkSize + tagSize
        while position < file.count {
            let end = min(position + sealedChunk, file.count)
            let last = end == file.count
            guard end - position >= tagSize else { throw Failure.malformed("a payload chunk is truncated") }
            let box: ChaChaPoly.SealedBox
            do {
                box = try ChaChaPoly.SealedBox(
                    nonce: try chunkNonce(counter, last: last),
                    ciphertext: UnsafeRawBufferPointer(rebasing: file[position..<(end - tagSize)]),
                    tag: UnsafeRawBufferPointer(rebasing: file[(end - tagSize)..<end]))
            } catch {
                throw Failure.malformed("a payload chunk is malformed")
            }
            guard var chunk = try? ChaChaPoly.open(box, using: payloadKey) else {
                throw Failure.malformed(
                    last
                        ? "the payload is truncated or altered (its final chunk does not authenticate)"
                        : "the payload is altered (chunk \(counter) does not authenticate)")
            }
            if last && chunk.isEmpty && counter > 0 {
                throw Failure.malformed("the payload ends with an empty chunk")
            }
            sink(&chunk)
            counter += 1
            position = end
        }
    }

    // MARK: - Header grammar

    struct ParsedHeader {
        var salt: [UInt8]
        var workFactor: Int
        var body: [UInt8]
        /// Bytes up to and including `---` (what the MAC covers).
        var macInput: Range<Int>
        var mac: [UInt8]
        /// Where the payload starts.
        var end: Int
    }

    /// The header's lines, checked against the v1 grammar and the scrypt stanza's rules.
    static func parseHeader(_ file: [UInt8]) throws -> ParsedHeader {
        var position = 0
        // One line without its LF; headers are small, so a missing LF in the first 4 KiB is damage.
        func line() throws -> (text: [UInt8], start: Int) {
            let start = position
            let limit = min(file.count, start + 4096)
            guard let newline = file[start..<limit].firstIndex(of: 0x0A) else {
                throw Failure.malformed("the header is truncated")
            }
            position = newline + 1
            return (Array(file[start..<newline]), start)
        }
        guard try line().text == Array(versionLine.utf8.dropLast()) else {
            throw Failure.malformed("it is not an age v1 file (the first line is not age-encryption.org/v1)")
        }
        var stanzas: [(args: [String], body: [UInt8])] = []
        while true {
            let (text, start) = try line()
            if text.starts(with: Array("---".utf8)) {
                guard text.count == 4 + 43, text[3] == 0x20 else {
                    throw Failure.malformed("the header MAC line is malformed")
                }
                guard let mac = decodeBase64(Array(text[4...])), mac.count == 32 else {
                    throw Failure.malformed("the header MAC is not canonical base64 of 32 bytes")
                }
                guard stanzas.count == 1 else {
                    throw Failure.malformed(
                        stanzas.isEmpty
                            ? "the header has no recipient stanza"
                            : "an scrypt stanza must be the only stanza (the file has \(stanzas.count))")
                }
                let (args, body) = stanzas[0]
                guard args.count == 3 else { throw Failure.malformed("the scrypt stanza needs exactly 2 arguments") }
                guard let salt = decodeBase64(Array(args[1].utf8)), salt.count == 16 else {
                    throw Failure.malformed("the scrypt salt is not canonical base64 of 16 bytes")
                }
                let factor = args[2]
                guard let firstDigit = factor.utf8.first, firstDigit >= UInt8(ascii: "1"),
                    firstDigit <= UInt8(ascii: "9"),
                    factor.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                    factor.utf8.count <= 2, let workFactor = Int(factor)
                else {
                    throw Failure.malformed("the scrypt work factor is not a decimal number without leading zeros")
                }
                guard workFactor <= maximumWorkFactor else {
                    throw Failure.malformed(
                        "the scrypt work factor 2^\(workFactor) is above the limit 2^\(maximumWorkFactor)")
                }
                guard body.count == 32 else { throw Failure.malformed("the scrypt stanza's body is not 32 bytes") }
                return ParsedHeader(
                    salt: salt, workFactor: workFactor, body: body,
                    macInput: 0..<(start + 3), mac: mac, end: position)
            }
            guard text.starts(with: Array("-> ".utf8)) else {
                throw Failure.malformed("a header line is neither a stanza nor the MAC")
            }
            let arguments = text[3...].split(separator: 0x20, omittingEmptySubsequences: false)
            guard arguments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0 >= 0x21 && $0 <= 0x7E } }) else {
                throw Failure.malformed("a stanza has an empty or non-printable argument")
            }
            let args = arguments.map { String(decoding: $0, as: UTF8.self) }
            if args.first != "scrypt" {
                throw Failure.malformed(
                    "the file is encrypted to a \(args.first ?? "?") recipient, not with a passphrase")
            }
            // The body: full 64-column lines, then one shorter (possibly empty) line.
            var encoded: [UInt8] = []
            while true {
                let (bodyLine, _) = try line()
                guard bodyLine.count <= 64 else {
                    throw Failure.malformed("a stanza body line is longer than 64 columns")
                }
                encoded += bodyLine
                if bodyLine.count < 64 { break }
            }
            guard let body = decodeBase64(encoded) else {
                throw Failure.malformed("a stanza body is not canonical base64")
            }
            stanzas.append((args, body))
        }
    }

    private static func checkMAC(_ parsed: ParsedHeader, file: [UInt8], fileKey: SymmetricKey) throws -> Header {
        let input = Array(file[parsed.macInput])
        guard
            HMAC<SHA256>.isValidAuthenticationCode(
                parsed.mac, authenticating: input,
                using: macKey(fileKey: fileKey))
        else {
            throw Failure.malformed("the header MAC does not match (the header was altered)")
        }
        return Header(bytes: Array(file[0..<parsed.end]), fileKey: fileKey, workFactor: parsed.workFactor)
    }

    // MARK: - Primitives

    static let zeroNonce = [UInt8](repeating: 0, count: 12)

    static func scrypt(passphrase: [UInt8], salt: [UInt8], workFactor: Int) throws -> SymmetricKey {
        try KDF.Scrypt.deriveKey(
            from: passphrase, salt: scryptLabel + salt, outputByteCount: 32,
            rounds: 1 << workFactor, blockSize: 8, parallelism: 1)
    }

    static func macKey(fileKey: SymmetricKey) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: fileKey, salt: [UInt8](), info: Array("header".utf8), outputByteCount: 32)
    }

    static func headerMAC(_ input: [UInt8], fileKey: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: input, using: macKey(fileKey: fileKey)))
    }

    static func payloadKey(fileKey: SymmetricKey, nonce: [UInt8]) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: fileKey, salt: nonce, info: Array("payload".utf8), outputByteCount: 32)
    }

    /// STREAM nonce: an 11-byte big-endian counter and the last-chunk flag.
    static func chunkNonce(_ counter: UInt64, last: Bool) throws -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        for index in 0..<8 { bytes[10 - index] = UInt8(truncatingIfNeeded: counter >> (8 * UInt64(index))) }
        bytes[11] = last ? 1 : 0
        return try ChaChaPoly.Nonce(data: bytes)
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// Unpadded standard base64 (Foundation's, with the padding taken off).
    static func base64(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }

    /// Decodes unpadded base64, refusing padding, other characters and non-canonical encodings
    /// (nonzero unused bits), as the spec requires.
    static func decodeBase64(_ text: [UInt8]) -> [UInt8]? {
        let alphabet = { (c: UInt8) in
            (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || (c >= 0x30 && c <= 0x39) || c == 0x2B || c == 0x2F
        }
        guard text.allSatisfy(alphabet), text.count % 4 != 1 else { return nil }
        let padded = String(decoding: text, as: UTF8.self) + String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: padded) else { return nil }
        let bytes = Array(data)
        return base64(bytes) == String(decoding: text, as: UTF8.self) ? bytes : nil
    }

    /// A stanza body wrapped at 64 columns, ending with a shorter (possibly empty) line.
    static func wrapped(_ body: String) -> String {
        var lines: [Substring] = []
        var rest = Substring(body)
        while rest.count >= 64 {
            lines.append(rest.prefix(64))
            rest = rest.dropFirst(64)
        }
        lines.append(rest)
        return lines.map { $0 + "\n" }.joined()
    }
}

extension SymmetricKey {
    var bytes: [UInt8] { withUnsafeBytes { Array($0) } }
}

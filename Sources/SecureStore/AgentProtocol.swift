/// The key agent's wire format: one request and one answer per connection, each a frame.
///
/// A frame is a 4-byte big-endian length, then that many bytes: the protocol version (1), the
/// message type, then fields, each a 4-byte big-endian length and its bytes. Everything is
/// bounded (`maximumFrameBytes`, `maximumFields`) and a frame with bytes left over, a field that
/// runs past the end, or an unknown version is refused: a parser of data from another process.
public struct AgentMessage: Equatable, Sendable {
    public static let version: UInt8 = 1
    /// The largest frame either side sends or reads: an authctl store file is a few KiB; a file
    /// larger than this is opened with the passphrase instead.
    public static let maximumFrameBytes = 1 << 20
    public static let maximumFields = 64

    public enum Kind: UInt8, Sendable {
        // Requests.
        /// [directory, age file] -> ok [plaintext] | notHeld
        case open = 1
        /// [directory, header or empty (the directory's header), plaintext] -> ok [age file] | notHeld
        case seal = 2
        /// [directory, header, file key, lifetime seconds (8), idle seconds (8)] -> ok
        case add = 3
        /// [] -> ok: forget everything (the agent then exits)
        case lock = 4
        /// [] -> ok [answers (8), then per directory: directory, expires at (8), header fingerprints]
        case status = 5
        // Answers.
        case ok = 0x80
        /// The agent holds no key for this directory or header: the caller uses the passphrase.
        case notHeld = 0x81
        /// [reason]: the request was understood and refused (a header that does not match its key).
        case refused = 0x82
    }

    public var kind: Kind
    public var fields: [[UInt8]]

    public init(_ kind: Kind, _ fields: [[UInt8]] = []) {
        self.kind = kind
        self.fields = fields
    }

    public enum ParseError: Error, Equatable {
        case malformed(String)
    }

    /// The frame's bytes, length prefix included.
    public func encoded() -> [UInt8] {
        var body: [UInt8] = [Self.version, kind.rawValue]
        for field in fields {
            body += Self.bigEndian(UInt32(field.count))
            body += field
        }
        return Self.bigEndian(UInt32(body.count)) + body
    }

    /// The length a frame's 4-byte prefix announces, refused when above the limit or zero.
    public static func frameLength(_ prefix: [UInt8]) throws -> Int {
        guard prefix.count == 4 else { throw ParseError.malformed("the length prefix is not 4 bytes") }
        let length = Int(readUInt32(prefix, at: 0))
        guard length >= 2, length <= maximumFrameBytes else {
            throw ParseError.malformed("a frame of \(length) bytes is outside 2...\(maximumFrameBytes)")
        }
        return length
    }

    /// A frame's body (after the length prefix).
    public static func parse(body: [UInt8]) throws -> AgentMessage {
        let (kind, ranges) = try body.withUnsafeBytes { try layout(body: $0) }
        return AgentMessage(kind, ranges.map { Array(body[$0]) })
    }

    /// A frame body's type and where each field lies in it: the one parser, for the arrays of the
    /// client and the fuzzer and for the agent's locked receive buffer, which it reads in place (a
    /// parsed copy of each field would leave secrets in the heap).
    public static func layout(body: UnsafeRawBufferPointer) throws -> (kind: Kind, fields: [Range<Int>]) {
        guard body.count >= 2, body.count <= maximumFrameBytes else {
            throw ParseError.malformed("the frame size is out of bounds")
        }
        guard body[0] == version else { throw ParseError.malformed("protocol version \(body[0]) is not \(version)") }
        guard let kind = Kind(rawValue: body[1]) else { throw ParseError.malformed("unknown message type \(body[1])") }
        var fields: [Range<Int>] = []
        var position = 2
        while position < body.count {
            guard fields.count < maximumFields else { throw ParseError.malformed("more than \(maximumFields) fields") }
            guard body.count - position >= 4 else { throw ParseError.malformed("a field's length is truncated") }
            let length = Int(readUInt32(body, at: position))
            position += 4
            guard length <= body.count - position else { throw ParseError.malformed("a field runs past the frame") }
            fields.append(position..<(position + length))
            position += length
        }
        return (kind, fields)
    }

    /// A whole frame, length prefix included (the fuzz target's entry).
    public static func parse(frame: [UInt8]) throws -> AgentMessage {
        guard frame.count >= 4 else { throw ParseError.malformed("the frame is shorter than its length prefix") }
        let length = try frameLength(Array(frame[0..<4]))
        guard frame.count - 4 == length else {
            throw ParseError.malformed("the frame's length does not match its bytes")
        }
        return try parse(body: Array(frame[4...]))
    }

    /// Field `index`, or a parse error naming what is missing.
    public func field(_ index: Int, _ name: String, maximum: Int = maximumFrameBytes) throws -> [UInt8] {
        try Self.checked(index < fields.count ? fields[index].count : nil, name, maximum: maximum)
        return fields[index]
    }

    /// Field `index` as UTF-8 text (a directory path: absolute, at most 4096 bytes, no NUL).
    public func path(_ index: Int) throws -> String {
        try Self.path(index < fields.count ? fields[index] : nil)
    }

    /// Field `index` as an 8-byte big-endian number.
    public func number(_ index: Int, _ name: String) throws -> UInt64 {
        try Self.number(index < fields.count ? fields[index] : nil, name)
    }

    // The field checks, shared with the agent's reading of its locked buffer (`AgentRequest`).

    /// A field of `count` bytes (nil: missing) within `maximum`.
    static func checked(_ count: Int?, _ name: String, maximum: Int) throws {
        guard let count else { throw ParseError.malformed("the \(name) field is missing") }
        guard count <= maximum else { throw ParseError.malformed("the \(name) field is too long") }
    }

    static func path<Bytes: Collection<UInt8>>(_ bytes: Bytes?) throws -> String {
        try checked(bytes?.count, "directory", maximum: 4096)
        guard let bytes, bytes.first == UInt8(ascii: "/"), !bytes.contains(0),
            let text = String(validating: bytes, as: UTF8.self)
        else {
            throw ParseError.malformed("the directory is not an absolute UTF-8 path")
        }
        return text
    }

    static func number<Bytes: Collection<UInt8>>(_ bytes: Bytes?, _ name: String) throws -> UInt64 {
        try checked(bytes?.count, name, maximum: maximumFrameBytes)
        guard let bytes, bytes.count == 8 else { throw ParseError.malformed("the \(name) field is not 8 bytes") }
        return bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    public static func number(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [
            UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
        ]
    }

    static func readUInt32<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes, at offset: Int) -> UInt32
    where Bytes.Index == Int {
        let index = bytes.startIndex + offset
        return UInt32(bytes[index]) << 24 | UInt32(bytes[index + 1]) << 16 | UInt32(bytes[index + 2]) << 8
            | UInt32(bytes[index + 3])
    }
}

/// What `status` answers: the agent's answer count and, per directory, until when it holds it
/// and the SHA-256 fingerprints of the headers it holds keys for (not secret: the headers are in
/// the files).
public struct AgentStatus: Sendable, Equatable {
    public struct Directory: Sendable, Equatable {
        public var path: String
        public var expiresAt: UInt64
        public var fingerprints: [[UInt8]]
    }

    public var answers: UInt64
    public var directories: [Directory]

    func fields() -> [[UInt8]] {
        var fields = [AgentMessage.number(answers)]
        for directory in directories {
            fields += [
                Array(directory.path.utf8), AgentMessage.number(directory.expiresAt),
                directory.fingerprints.flatMap { $0 },
            ]
        }
        return fields
    }

    static func parse(_ message: AgentMessage) throws -> AgentStatus {
        let answers = try message.number(0, "answers")
        guard (message.fields.count - 1) % 3 == 0 else {
            throw AgentMessage.ParseError.malformed("status fields are not triples")
        }
        var directories: [Directory] = []
        var index = 1
        while index < message.fields.count {
            let path = try message.path(index)
            let expires = try message.number(index + 1, "expiry")
            let joined = message.fields[index + 2]
            guard joined.count % 32 == 0 else {
                throw AgentMessage.ParseError.malformed("a fingerprint is not 32 bytes")
            }
            let fingerprints = stride(from: 0, to: joined.count, by: 32).map { Array(joined[$0..<($0 + 32)]) }
            directories.append(Directory(path: path, expiresAt: expires, fingerprints: fingerprints))
            index += 3
        }
        return AgentStatus(answers: answers, directories: directories)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The D-Bus wire format, as much of it as authctl's direct Secret Service read needs: every
/// type of the specification is decoded (so any answer can be read and checked), and what
/// authctl sends is encoded from the same values.
///
/// Everything read is bounded before it is used: a message's size against `maximumSize`,
/// each length against what is left, the nesting depth against the specification's limits,
/// strings as UTF-8 without NUL, object paths and signatures by their grammar.
package enum DBusType: Equatable, Sendable {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD, variant
    indirect case array(DBusType)
    indirect case dictEntry(key: DBusType, value: DBusType)
    case structure([DBusType])

    /// The alignment of the type's values on the wire.
    var alignment: Int {
        switch self {
        case .byte, .signature, .variant: 1
        case .int16, .uint16: 2
        case .boolean, .int32, .uint32, .string, .objectPath, .unixFD, .array: 4
        case .int64, .uint64, .double, .dictEntry, .structure: 8
        }
    }

    var signature: String {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array(let element): "a" + element.signature
        case .dictEntry(let key, let value): "{" + key.signature + value.signature + "}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        }
    }

    var isBasic: Bool {
        switch self {
        case .variant, .array, .dictEntry, .structure: false
        default: true
        }
    }

    /// The complete types of a signature, in order; throws on anything the grammar does not allow
    /// (a dict entry outside an array, a non-basic key, an empty struct, nesting past the limits).
    static func parse(signature: String) throws -> [DBusType] {
        let bytes = Array(signature.utf8)
        guard bytes.count <= 255 else { throw DBusWireError.malformed("a signature longer than 255 bytes") }
        var index = 0
        var types: [DBusType] = []
        while index < bytes.count {
            types.append(try parseOne(bytes, &index, arrays: 0, structs: 0, inArray: false))
        }
        return types
    }

    private static func parseOne(
        _ bytes: [UInt8], _ index: inout Int, arrays: Int, structs: Int, inArray: Bool
    ) throws -> DBusType {
        guard index < bytes.count else { throw DBusWireError.malformed("a signature ends inside a type") }
        let code = bytes[index]
        index += 1
        switch code {
        case UInt8(ascii: "y"): return .byte
        case UInt8(ascii: "b"): return .boolean
        case UInt8(ascii: "n"): return .int16
        case UInt8(ascii: "q"): return .uint16
        case UInt8(ascii: "i"): return .int32
        case UInt8(ascii: "u"): return .uint32
        case UInt8(ascii: "x"): return .int64
        case UInt8(ascii: "t"): return .uint64
        case UInt8(ascii: "d"): return .double
        case UInt8(ascii: "s"): return .string
        case UInt8(ascii: "o"): return .objectPath
        case UInt8(ascii: "g"): return .signature
        case UInt8(ascii: "h"): return .unixFD
        case UInt8(ascii: "v"): return .variant
        case UInt8(ascii: "a"):
            guard arrays < 32 else { throw DBusWireError.malformed("arrays nested deeper than 32") }
            return .array(try parseOne(bytes, &index, arrays: arrays + 1, structs: structs, inArray: true))
        case UInt8(ascii: "("):
            guard structs < 32 else { throw DBusWireError.malformed("structs nested deeper than 32") }
            var fields: [DBusType] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                fields.append(try parseOne(bytes, &index, arrays: arrays, structs: structs + 1, inArray: false))
            }
            guard index < bytes.count, !fields.isEmpty else { throw DBusWireError.malformed("an empty or open struct") }
            index += 1
            return .structure(fields)
        case UInt8(ascii: "{"):
            guard inArray, structs < 32 else { throw DBusWireError.malformed("a dict entry outside an array") }
            let key = try parseOne(bytes, &index, arrays: arrays, structs: structs + 1, inArray: false)
            let value = try parseOne(bytes, &index, arrays: arrays, structs: structs + 1, inArray: false)
            guard key.isBasic, index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                throw DBusWireError.malformed("a dict entry that is not {basic, one type}")
            }
            index += 1
            return .dictEntry(key: key, value: value)
        default:
            throw DBusWireError.malformed("an unknown type code in a signature")
        }
    }
}

/// One D-Bus value.
package indirect enum DBusValue: Equatable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    case unixFD(UInt32)
    case variant(DBusValue)
    /// The element type is kept so that an empty array still has one.
    case array(DBusType, [DBusValue])
    case dictEntry(DBusValue, DBusValue)
    case structure([DBusValue])

    var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .variant: .variant
        case .array(let element, _): .array(element)
        case .dictEntry(let key, let value): .dictEntry(key: key.type, value: value.type)
        case .structure(let fields): .structure(fields.map(\.type))
        }
    }

    /// `ay`.
    static func bytes(_ bytes: [UInt8]) -> DBusValue { .array(.byte, bytes.map { .byte($0) }) }

    /// `a{ss}`.
    static func stringDictionary(_ entries: [(String, String)]) -> DBusValue {
        .array(.dictEntry(key: .string, value: .string), entries.map { .dictEntry(.string($0.0), .string($0.1)) })
    }

    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var objectPathValue: String? {
        if case .objectPath(let path) = self { return path }
        return nil
    }

    var uint32Value: UInt32? {
        if case .uint32(let value) = self { return value }
        return nil
    }

    /// The bytes of an `ay`.
    var byteArrayValue: [UInt8]? {
        guard case .array(.byte, let elements) = self else { return nil }
        return elements.map { element in
            if case .byte(let byte) = element { return byte }
            return 0
        }
    }

    /// The paths of an `ao`.
    var objectPathArrayValue: [String]? {
        guard case .array(.objectPath, let elements) = self else { return nil }
        return elements.compactMap(\.objectPathValue)
    }
}

package enum DBusWireError: Error, Equatable {
    /// Not D-Bus as the specification writes it: a length past the end, bad padding, bad UTF-8.
    case malformed(String)
    /// A message larger than the reader accepts.
    case tooLarge(Int)
}

/// A D-Bus message: its header's fields and its body.
package struct DBusMessage: Equatable, Sendable {
    enum Kind: UInt8, Sendable {
        case methodCall = 1
        case methodReturn = 2
        case error = 3
        case signal = 4
    }

    static let noReplyExpected: UInt8 = 0x1

    /// What authctl reads: its answers are a few kilobytes; the specification allows 128 MiB.
    package static let maximumSize = 1 << 20

    var kind: Kind
    var flags: UInt8 = 0
    var serial: UInt32
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var replySerial: UInt32?
    var destination: String?
    var sender: String?
    var body: [DBusValue] = []

    static func methodCall(
        serial: UInt32, destination: String, path: String, interface: String, member: String,
        body: [DBusValue] = [], flags: UInt8 = 0
    ) -> DBusMessage {
        DBusMessage(
            kind: .methodCall, flags: flags, serial: serial, path: path, interface: interface, member: member,
            destination: destination, body: body)
    }

    // MARK: - Encoding (little-endian)

    package func encoded() -> [UInt8] {
        var fields: [DBusValue] = []
        func field(_ code: UInt8, _ value: DBusValue?) {
            if let value { fields.append(.structure([.byte(code), .variant(value)])) }
        }
        field(1, path.map { .objectPath($0) })
        field(2, interface.map { .string($0) })
        field(3, member.map { .string($0) })
        field(4, errorName.map { .string($0) })
        field(5, replySerial.map { .uint32($0) })
        field(6, destination.map { .string($0) })
        field(7, sender.map { .string($0) })
        if !body.isEmpty { field(8, .signature(body.map(\.type.signature).joined())) }

        var bodyWriter = DBusWriter()
        for value in body { bodyWriter.write(value) }

        var writer = DBusWriter()
        writer.bytes += [UInt8(ascii: "l"), kind.rawValue, flags, 1]
        writer.writeUInt32(UInt32(bodyWriter.bytes.count))
        writer.writeUInt32(serial)
        writer.write(.array(.structure([.byte, .variant]), fields))
        writer.pad(to: 8)
        return writer.bytes + bodyWriter.bytes
    }

    // MARK: - Decoding

    /// The whole message's length from its first 16 bytes, checked against `maximumSize` before
    /// anything else is read.
    package static func length(ofPrefix prefix: [UInt8]) throws -> Int {
        guard prefix.count >= 16 else { throw DBusWireError.malformed("a message shorter than its fixed header") }
        let little: Bool
        switch prefix[0] {
        case UInt8(ascii: "l"): little = true
        case UInt8(ascii: "B"): little = false
        default: throw DBusWireError.malformed("an unknown byte order")
        }
        guard prefix[3] == 1 else { throw DBusWireError.malformed("a protocol version other than 1") }
        let bodyLength = Int(DBusReader.uint32(prefix, at: 4, little: little))
        let fieldsLength = Int(DBusReader.uint32(prefix, at: 12, little: little))
        guard bodyLength <= maximumSize, fieldsLength <= maximumSize else {
            throw DBusWireError.tooLarge(max(bodyLength, fieldsLength))
        }
        let headerLength = (16 + fieldsLength + 7) & ~7
        let total = headerLength + bodyLength
        guard total <= maximumSize else { throw DBusWireError.tooLarge(total) }
        return total
    }

    /// Decodes one whole message (`length(ofPrefix:)` bytes).
    package static func decode(_ bytes: [UInt8]) throws -> DBusMessage {
        let total = try length(ofPrefix: bytes)
        guard bytes.count == total else { throw DBusWireError.malformed("a message whose length is not its header's") }
        var reader = DBusReader(bytes: bytes, little: bytes[0] == UInt8(ascii: "l"))
        reader.offset = 1
        guard let kind = Kind(rawValue: try reader.readByte()) else {
            throw DBusWireError.malformed("an unknown message type")
        }
        let flags = try reader.readByte()
        reader.offset = 4
        let bodyLength = Int(try reader.readUInt32())
        let serial = try reader.readUInt32()
        guard serial != 0 else { throw DBusWireError.malformed("a message with serial 0") }
        let fields = try reader.read(.array(.structure([.byte, .variant])), depth: 0)
        try reader.align(8)
        guard reader.offset + bodyLength == bytes.count else {
            throw DBusWireError.malformed("a header that does not end where the body starts")
        }

        var message = DBusMessage(kind: kind, flags: flags, serial: serial)
        var bodySignature = ""
        guard case .array(_, let entries) = fields else { throw DBusWireError.malformed("no header fields") }
        for entry in entries {
            guard case .structure(let pair) = entry, pair.count == 2, case .byte(let code) = pair[0],
                case .variant(let value) = pair[1]
            else { throw DBusWireError.malformed("a header field that is not (y, v)") }
            switch (code, value) {
            case (1, .objectPath(let text)): message.path = text
            case (2, .string(let text)): message.interface = text
            case (3, .string(let text)): message.member = text
            case (4, .string(let text)): message.errorName = text
            case (5, .uint32(let number)): message.replySerial = number
            case (6, .string(let text)): message.destination = text
            case (7, .string(let text)): message.sender = text
            case (8, .signature(let text)): bodySignature = text
            case (1...8, _): throw DBusWireError.malformed("a header field of the wrong type")
            default: break  // unknown fields (and UNIX_FDS) are ignored, as the specification says
            }
        }
        switch kind {
        case .methodCall, .signal:
            guard message.path != nil, message.member != nil else {
                throw DBusWireError.malformed("a call or signal without a path or member")
            }
        case .methodReturn:
            guard message.replySerial != nil else { throw DBusWireError.malformed("a reply without a serial") }
        case .error:
            guard message.replySerial != nil, message.errorName != nil else {
                throw DBusWireError.malformed("an error without a serial or name")
            }
        }

        var body = DBusReader(bytes: Array(bytes[reader.offset...]), little: reader.little)
        for type in try DBusType.parse(signature: bodySignature) {
            message.body.append(try body.read(type, depth: 0))
        }
        guard body.offset == body.bytes.count else { throw DBusWireError.malformed("bytes after the body") }
        return message
    }
}

/// Appends values in little-endian order, with the padding the specification asks for
/// (alignment is relative to the start of the message or of the body).
struct DBusWriter {
    var bytes: [UInt8] = []

    mutating func pad(to alignment: Int) {
        while bytes.count % alignment != 0 { bytes.append(0) }
    }

    mutating func writeUInt32(_ value: UInt32) {
        pad(to: 4)
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    private mutating func writeText(_ text: String, lengthAsByte: Bool) {
        let utf8 = Array(text.utf8)
        if lengthAsByte {
            bytes.append(UInt8(truncatingIfNeeded: utf8.count))
        } else {
            writeUInt32(UInt32(utf8.count))
        }
        bytes += utf8
        bytes.append(0)
    }

    mutating func write(_ value: DBusValue) {
        pad(to: value.type.alignment)
        switch value {
        case .byte(let byte): bytes.append(byte)
        case .boolean(let flag): writeUInt32(flag ? 1 : 0)
        case .int16(let number): withUnsafeBytes(of: number.littleEndian) { bytes += $0 }
        case .uint16(let number): withUnsafeBytes(of: number.littleEndian) { bytes += $0 }
        case .int32(let number): withUnsafeBytes(of: number.littleEndian) { bytes += $0 }
        case .uint32(let number), .unixFD(let number): writeUInt32(number)
        case .int64(let number): withUnsafeBytes(of: number.littleEndian) { bytes += $0 }
        case .uint64(let number): withUnsafeBytes(of: number.littleEndian) { bytes += $0 }
        case .double(let number): withUnsafeBytes(of: number.bitPattern.littleEndian) { bytes += $0 }
        case .string(let text), .objectPath(let text): writeText(text, lengthAsByte: false)
        case .signature(let text): writeText(text, lengthAsByte: true)
        case .variant(let inner):
            writeText(inner.type.signature, lengthAsByte: true)
            write(inner)
        case .array(let element, let elements):
            writeUInt32(0)
            let lengthAt = bytes.count - 4
            pad(to: element.alignment)
            let start = bytes.count
            for item in elements { write(item) }
            let length = UInt32(bytes.count - start).littleEndian
            withUnsafeBytes(of: length) { raw in
                for index in 0..<4 { bytes[lengthAt + index] = raw[index] }
            }
        case .dictEntry(let key, let entryValue):
            write(key)
            write(entryValue)
        case .structure(let fields):
            for field in fields { write(field) }
        }
    }
}

/// Reads values of a given type, checking every length and every padding byte.
struct DBusReader {
    let bytes: [UInt8]
    let little: Bool
    var offset = 0

    init(bytes: [UInt8], little: Bool) {
        self.bytes = bytes
        self.little = little
    }

    static func uint32(_ bytes: [UInt8], at offset: Int, little: Bool) -> UInt32 {
        let value = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * UInt32($1)) }
        return little ? value : value.byteSwapped
    }

    private func need(_ count: Int) throws {
        guard count >= 0, count <= bytes.count - offset else {
            throw DBusWireError.malformed("a value that runs past the end")
        }
    }

    mutating func align(_ alignment: Int) throws {
        let padded = (offset + alignment - 1) / alignment * alignment
        try need(padded - offset)
        guard bytes[offset..<padded].allSatisfy({ $0 == 0 }) else {
            throw DBusWireError.malformed("padding that is not zero")
        }
        offset = padded
    }

    mutating func readByte() throws -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func readInteger<T: FixedWidthInteger>(_: T.Type) throws -> T {
        try align(MemoryLayout<T>.size)
        try need(MemoryLayout<T>.size)
        var value: T = 0
        for index in 0..<MemoryLayout<T>.size {
            value |= T(truncatingIfNeeded: bytes[offset + index]) << (8 * index)
        }
        offset += MemoryLayout<T>.size
        return little ? value : value.byteSwapped
    }

    mutating func readUInt32() throws -> UInt32 { try readInteger(UInt32.self) }

    private mutating func readText(length: Int) throws -> String {
        try need(length + 1)
        let utf8 = bytes[offset..<offset + length]
        guard bytes[offset + length] == 0, !utf8.contains(0), let text = String(validating: utf8, as: UTF8.self)
        else { throw DBusWireError.malformed("a string that is not NUL-terminated UTF-8") }
        offset += length + 1
        return text
    }

    /// Depth counts containers, so that a hostile variant cannot recurse without end
    /// (the specification's limit is 64 in all).
    mutating func read(_ type: DBusType, depth: Int) throws -> DBusValue {
        guard depth <= 64 else { throw DBusWireError.malformed("values nested deeper than 64") }
        switch type {
        case .byte: return .byte(try readByte())
        case .boolean:
            let raw = try readUInt32()
            guard raw <= 1 else { throw DBusWireError.malformed("a boolean other than 0 or 1") }
            return .boolean(raw == 1)
        case .int16: return .int16(try readInteger(Int16.self))
        case .uint16: return .uint16(try readInteger(UInt16.self))
        case .int32: return .int32(try readInteger(Int32.self))
        case .uint32: return .uint32(try readUInt32())
        case .int64: return .int64(try readInteger(Int64.self))
        case .uint64: return .uint64(try readInteger(UInt64.self))
        case .double: return .double(Double(bitPattern: try readInteger(UInt64.self)))
        case .unixFD: return .unixFD(try readUInt32())
        case .string: return .string(try readText(length: Int(try readUInt32())))
        case .objectPath:
            let path = try readText(length: Int(try readUInt32()))
            guard Self.isObjectPath(path) else { throw DBusWireError.malformed("an invalid object path") }
            return .objectPath(path)
        case .signature:
            let text = try readText(length: Int(try readByte()))
            _ = try DBusType.parse(signature: text)
            return .signature(text)
        case .variant:
            let text = try readText(length: Int(try readByte()))
            let types = try DBusType.parse(signature: text)
            guard types.count == 1 else { throw DBusWireError.malformed("a variant of other than one type") }
            return .variant(try read(types[0], depth: depth + 1))
        case .array(let element):
            let length = Int(try readUInt32())
            guard length <= 1 << 26 else { throw DBusWireError.malformed("an array longer than 64 MiB") }
            try align(element.alignment)
            try need(length)
            let end = offset + length
            var elements: [DBusValue] = []
            while offset < end {
                elements.append(try read(element, depth: depth + 1))
            }
            guard offset == end else { throw DBusWireError.malformed("an array whose elements overrun it") }
            return .array(element, elements)
        case .dictEntry(let key, let value):
            try align(8)
            return .dictEntry(try read(key, depth: depth + 1), try read(value, depth: depth + 1))
        case .structure(let fields):
            try align(8)
            var values: [DBusValue] = []
            for field in fields { values.append(try read(field, depth: depth + 1)) }
            return .structure(values)
        }
    }

    /// `/` or `/`-separated elements of `[A-Za-z0-9_]+`.
    static func isObjectPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        guard bytes.last != UInt8(ascii: "/") else { return false }
        var previousSlash = true
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                if previousSlash { return false }
                previousSlash = true
                continue
            }
            previousSlash = false
            let allowed =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_")
            if !allowed { return false }
        }
        return true
    }
}

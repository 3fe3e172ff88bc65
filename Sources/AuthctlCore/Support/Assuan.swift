/// The Assuan protocol as pinentry speaks it (libassuan's "Assuan" manual): one line per
/// message, at most 1000 bytes with its line feed; `%`, CR and LF in a line's text percent-escaped.
package enum Assuan {
    /// The longest line, line feed included (ASSUAN_LINELENGTH).
    package static let maximumLine = 1000

    /// One line from the server (pinentry).
    package enum Reply: Equatable {
        case ok
        /// `D`: `count` decoded bytes, written where the parser was told to decode (a secret never
        /// goes through a Swift array).
        case data(count: Int)
        /// `ERR code text`: the libgpg-error code (source in the top byte, code in the low 16 bits).
        case error(code: UInt32, text: String)
        /// `S`, `#`: status and comments, read past.
        case status
        /// `INQUIRE keyword`: the server wants data authctl never gives.
        case inquire(String)
        /// `END`, which only a client sends.
        case end
    }

    package struct ProtocolError: Error, Equatable {
        package let message: String
    }

    /// GPG_ERR_CANCELED (99): pinentry-tty's Ctrl-D, a dialog's Cancel button.
    package static let cancelled: UInt32 = 99
    /// GPG_ERR_FULLY_CANCELED (198): pinentry-tty's Ctrl-C (and the pinentry then ends).
    package static let fullyCancelled: UInt32 = 198
    /// GPG_ERR_TIMEOUT (62): SETTIMEOUT ran out.
    package static let timedOut: UInt32 = 62

    /// Parses one line (its line feed removed). A `D` line's data is percent-decoded into `decoded`.
    package static func parse(_ line: UnsafeRawBufferPointer, decodingInto decoded: UnsafeMutableRawBufferPointer)
        throws -> Reply
    {
        guard line.count < maximumLine else {
            throw ProtocolError(message: "a line longer than \(maximumLine - 1) bytes")
        }
        let verb = line.prefix { $0 != UInt8(ascii: " ") }
        let rest =
            line.count > verb.count
            ? UnsafeRawBufferPointer(rebasing: line[(verb.count + 1)...]) : .init(start: nil, count: 0)
        switch String(decoding: verb, as: UTF8.self) {
        case "OK": return .ok
        case "D": return .data(count: try percentDecode(rest, into: decoded))
        case "S", "#": return .status
        case "END": return .end
        case "ERR":
            let codeText = rest.prefix { $0 != UInt8(ascii: " ") }
            guard let code = UInt32(String(decoding: codeText, as: UTF8.self)) else {
                throw ProtocolError(message: "an ERR line without a number")
            }
            let text = rest.count > codeText.count ? String(decoding: rest[(codeText.count + 1)...], as: UTF8.self) : ""
            return .error(code: code, text: text)
        case "INQUIRE":
            return .inquire(String(decoding: rest.prefix { $0 != UInt8(ascii: " ") }, as: UTF8.self))
        default:
            if verb.first == UInt8(ascii: "#") { return .status }
            throw ProtocolError(message: "an answer that is not Assuan")
        }
    }

    /// The low 16 bits of a libgpg-error value: the code without its source.
    package static func code(_ value: UInt32) -> UInt32 { value & 0xFFFF }

    /// `%XX` to bytes; any other `%` is an error. Returns how many bytes were written.
    package static func percentDecode(_ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer) throws
        -> Int
    {
        var written = 0
        var index = 0
        while index < text.count {
            var byte = text[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < text.count, let high = hexValue(text[index + 1]), let low = hexValue(text[index + 2])
                else { throw ProtocolError(message: "a D line with a broken %-escape") }
                byte = high << 4 | low
                index += 3
            } else {
                index += 1
            }
            guard written < out.count else { throw ProtocolError(message: "a D line longer than authctl reads") }
            out[written] = byte
            written += 1
        }
        return written
    }

    /// What authctl sends as a command's text: `%`, CR and LF escaped (Assuan's rule), the whole
    /// cut to fit one line after `verb` and its space (a cut never splits an escape).
    package static func command(_ verb: String, _ text: String) -> String {
        let room = maximumLine - 1 - verb.utf8.count - 1
        var escaped = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let piece: String
            switch scalar {
            case "%": piece = "%25"
            case "\r": piece = "%0D"
            case "\n": piece = "%0A"
            default: piece = String(scalar)
            }
            used += piece.utf8.count
            guard used <= room else { break }
            escaped += piece
        }
        return verb + " " + escaped
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// application/x-www-form-urlencoded, as the token and revoke endpoints take it and as a
/// redirect's query carries it.
enum FormEncoding {
    /// RFC 3986 unreserved characters pass; every other UTF-8 byte is percent-encoded (space too).
    static func escape(_ value: String) -> String {
        PercentEncoding.encode(value, keeping: PercentEncoding.isUnreserved)
    }

    /// `%XX` sequences decoded; nil when one is malformed or the bytes are not UTF-8 (as
    /// Foundation's removingPercentEncoding, which FoundationEssentials lacks).
    static func unescape<S: StringProtocol>(_ text: S) -> String? {
        var bytes = [UInt8]()
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Decodes a query or form body: `+` is a space, `%XX` a byte; a repeated name keeps its first value.
    static func decode(_ query: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let unplus = { (s: Substring) in unescape(s.replacing("+", with: " ")) }
            guard let name = unplus(parts[0]), !name.isEmpty else { continue }
            let value = parts.count > 1 ? (unplus(parts[1]) ?? "") : ""
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }
}

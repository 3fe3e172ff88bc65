#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The header section of a response as libcurl's header callback delivers it, one line per call:
/// status line, header lines, blank end line, possibly several times (after a 100 Continue, a
/// proxy's CONNECT answer). Only the last response's headers are kept; names are lower-cased and a
/// repeated header keeps its last value (`HTTPResponse.headers`). Public so `Fuzz/` can feed it
/// the bytes a hostile server would send.
public struct ResponseHeaders {
    /// The cap on the whole header section, every response of the transfer counted.
    public static let maxBytes = 256 * 1024

    public private(set) var fields: [String: String] = [:]
    public private(set) var byteCount = 0
    /// Set once the cap was passed; the transfer is then aborted.
    public private(set) var overflow = false

    public init() {}

    /// Takes one line (with or without its CRLF). False once the section passes `maxBytes`.
    public mutating func add(line: UnsafeRawBufferPointer) -> Bool {
        byteCount += line.count
        guard byteCount <= Self.maxBytes else {
            overflow = true
            return false
        }
        let text = String(decoding: line, as: UTF8.self).trimmed()
        if text.hasPrefix("HTTP/") {
            // A new response begins: keep only the final response's headers.
            fields = [:]
            return true
        }
        guard let colon = text.firstIndex(of: ":") else { return true }
        let name = text[..<colon].trimmedBlanks().lowercased()
        guard !name.isEmpty else { return true }
        fields[name] = text[text.index(after: colon)...].trimmedBlanks()
        return true
    }
}

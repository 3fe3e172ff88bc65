#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Formats shared by every command's output.
package enum Format {
    package static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    package static func json<T: Encodable>(_ value: T) -> String {
        guard let data = try? jsonEncoder.encode(value) else { return "{}" }
        return TerminalText.jsonSafe(String(decoding: data, as: UTF8.self))
    }

    /// ISO 8601 in UTC, as in JSON output: `2026-11-22T05:00:00Z` (whole seconds, truncated).
    package static func iso8601(_ date: Date) -> String {
        Date.ISO8601FormatStyle().format(date)
    }

    /// A duration as whole seconds, for output: a checked conversion (`Int(_:)` traps on a value
    /// out of range, NaN or infinity), clamped to ±100 years.
    package static func wholeSeconds(_ seconds: Double) -> Int {
        let bound = 100 * 366 * 86400.0
        guard seconds.isFinite else { return seconds > 0 ? Int(bound) : 0 }
        return Int(min(max(seconds.rounded(), -bound), bound))
    }

    /// A duration for people, exactly: `8 s`, `15 min`, `1 h 30 min`, `2 d` (never rounded away:
    /// an 8-second idle time was once said as "0 min").
    package static func duration(seconds: UInt64) -> String {
        let parts: [(UInt64, String)] = [
            (seconds / 86400, "d"), (seconds % 86400 / 3600, "h"), (seconds % 3600 / 60, "min"), (seconds % 60, "s"),
        ]
        let said = parts.filter { $0.0 > 0 }.map { "\($0.0) \($0.1)" }
        return said.isEmpty ? "0 s" : said.joined(separator: " ")
    }

    /// For people: local time with the zone's abbreviation from the time-zone database, as
    /// `date` shows it: `2026-11-22 06:00:00 CET`. From libc (TZ, /etc/localtime): without ICU,
    /// FoundationEssentials knows no zone but GMT.
    package static func localTime(_ date: Date) -> String {
        // Years 1 to 9999 (as ISO 8601 writes them); also keeps NaN and huge values from time_t(_:).
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds >= -62_135_596_800, seconds <= 253_402_300_799 else { return iso8601(date) }
        var time = time_t(seconds)
        var parts = tm()
        guard localtime_r(&time, &parts) != nil else { return iso8601(date) }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S %Z", &parts)
        guard length > 0 else { return iso8601(date) }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension CommandContext {
    package func printJSON<T: Encodable>(_ value: T) {
        console.output(Format.json(value))
    }
}

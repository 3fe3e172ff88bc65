import Foundation

/// Formats shared by every command's output.
enum Format {
    static let jsonEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static func json<T: Encodable>(_ value: T) -> String {
        guard let data = try? jsonEncoder.encode(value) else { return "{}" }
        return TerminalText.jsonSafe(String(decoding: data, as: UTF8.self))
    }

    /// ISO 8601 in UTC, as in JSON output: `2026-11-22T05:00:00Z`.
    static func iso8601(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }

    /// A duration as whole seconds, for output: a checked conversion (`Int(_:)` traps on a value
    /// out of range, NaN or infinity), clamped to ±100 years.
    static func wholeSeconds(_ seconds: Double) -> Int {
        let bound = 100 * 366 * 86400.0
        guard seconds.isFinite else { return seconds > 0 ? Int(bound) : 0 }
        return Int(min(max(seconds.rounded(), -bound), bound))
    }

    /// For people: local time with its zone, `2026-11-22 06:00:00 CET`.
    static func localTime(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone.current
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss zzz"
        return formatter.string(from: date)
    }
}

extension CommandContext {
    func printJSON<T: Encodable>(_ value: T) {
        console.output(Format.json(value))
    }
}

import ArgumentParser
import AuthctlCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How far back `ops investigate` and `ops contain`'s snapshot read a user's sign-in events.
struct EventBoundOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Sign-in events since then: an ISO 8601 time (2026-12-01T03:00:00Z) or an age (48h, 7d; default: every page up to --max-events).",
            valueName: "time"))
    var since: String?

    @Option(help: ArgumentHelp("At most this many sign-in events a user (at most 10000).", valueName: "n"))
    var maxEvents = 200

    func validate() throws {
        guard (1...10000).contains(maxEvents) else { throw ValidationError("--max-events must be 1 to 10000.") }
        if let since, Self.time(since, now: Date()) == nil {
            throw ValidationError(
                "--since \(UntrustedText(since)): give an ISO 8601 time (2026-12-01T03:00:00Z) or an age (48h, 7d).")
        }
    }

    func bounds(now: Date) -> EventBounds {
        EventBounds(since: since.flatMap { Self.time($0, now: now) }, maximum: maxEvents)
    }

    /// An ISO 8601 time, or an age before `now` in seconds, minutes, hours or days.
    static func time(_ text: String, now: Date) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        guard let unit = text.last.flatMap({ units[$0] }), let count = Double(text.dropLast()), count >= 0,
            count * unit <= 400 * 86400
        else { return nil }
        return now.addingTimeInterval(-count * unit)
    }
}

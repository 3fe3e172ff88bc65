#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The TIMESTAMP Cognito expects in a PASSWORD_VERIFIER answer: `EEE MMM d HH:mm:ss UTC yyyy`,
/// e.g. `Tue Jul 10 11:01:00 UTC 2018` and `Sun Jul 1 00:00:00 UTC 2018` (day not padded,
/// 24-hour clock). Always English and UTC: built from `gmtime_r` and fixed name tables, so
/// neither the locale nor TZ can change it.
public enum SRPTimestamp {
    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: dates outside are clamped so gmtime_r
    /// always succeeds.
    private static let earliest: Double = -62_135_596_800
    private static let latest: Double = 253_402_300_799

    public static func string(for date: Date) -> String {
        var seconds = date.timeIntervalSince1970.rounded(.down)
        if !(seconds >= earliest) { seconds = earliest }  // also catches NaN
        if seconds > latest { seconds = latest }
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else {
            return "Thu Jan 1 00:00:00 UTC 1970"  // unreachable within the clamped range
        }
        let weekday = weekdays[Int(parts.tm_wday) % 7]
        let month = months[Int(parts.tm_mon) % 12]
        return
            "\(weekday) \(month) \(parts.tm_mday) \(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) UTC "
            + pad(Int(parts.tm_year) + 1900, to: 4)
    }

    private static func two(_ value: Int32) -> String {
        pad(Int(value), to: 2)
    }

    private static func pad(_ value: Int, to width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}

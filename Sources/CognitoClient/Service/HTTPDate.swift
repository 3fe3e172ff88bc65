#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An HTTP-date (RFC 9110 §5.6.7), read by hand: Foundation's `DateFormatter` leaks on Linux
/// (LeakSanitizer stopped the `retry-after` fuzz target inside it) and accepts more than the
/// grammar. All three forms a recipient must accept, always GMT:
///
///     IMF-fixdate  Sun, 06 Nov 1994 08:49:37 GMT
///     RFC 850      Sunday, 06-Nov-94 08:49:37 GMT
///     asctime      Sun Nov  6 08:49:37 1994
///
/// Strict otherwise: case-sensitive names, exact spacing, a real calendar date, hour 0–23,
/// minute 0–59, second 0–60 (a leap second). The day name is checked against the date.
public enum HTTPDate {
    /// The date, or nil when `text` is none of the three forms; `now` decides the century of an
    /// RFC 850 two-digit year.
    public static func parse(_ text: String, now: Date = Date()) -> Date? {
        let bytes = Array(text.utf8)
        return imfFixdate(bytes) ?? rfc850(bytes, now: now) ?? asctime(bytes)
    }

    private static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `Sun, 06 Nov 1994 08:49:37 GMT`
    private static func imfFixdate(_ b: [UInt8]) -> Date? {
        var r = Reader(b)
        guard let weekday = r.name(shortDays), r.literal(", "), let day = r.digits(2), r.literal(" "),
            let month = r.name(months), r.literal(" "), let year = r.digits(4), r.literal(" "),
            let time = r.time(), r.literal(" GMT"), r.atEnd
        else { return nil }
        return date(year: year, month: month + 1, day: day, time: time, weekday: weekday)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`; a two-digit year more than 50 years ahead is in the past
    /// century (RFC 9110 §5.6.7).
    private static func rfc850(_ b: [UInt8], now: Date) -> Date? {
        var r = Reader(b)
        guard let weekday = r.name(longDays), r.literal(", "), let day = r.digits(2), r.literal("-"),
            let month = r.name(months), r.literal("-"), let shortYear = r.digits(2), r.literal(" "),
            let time = r.time(), r.literal(" GMT"), r.atEnd
        else { return nil }
        let thisYear = year(ofDay: Int((max(-1e12, min(1e12, now.timeIntervalSince1970)) / 86_400).rounded(.down)))
        var year = thisYear - thisYear % 100 + shortYear
        if year > thisYear + 50 { year -= 100 }
        return date(year: year, month: month + 1, day: day, time: time, weekday: weekday)
    }

    /// `Sun Nov  6 08:49:37 1994` (the day padded with a space, not a zero)
    private static func asctime(_ b: [UInt8]) -> Date? {
        var r = Reader(b)
        guard let weekday = r.name(shortDays), r.literal(" "), let month = r.name(months), r.literal(" ") else {
            return nil
        }
        let day: Int
        if r.literal(" ") {
            guard let digit = r.digits(1) else { return nil }
            day = digit
        } else {
            guard let digits = r.digits(2), digits >= 10 else { return nil }
            day = digits
        }
        guard r.literal(" "), let time = r.time(), r.literal(" "), let year = r.digits(4), r.atEnd else { return nil }
        return date(year: year, month: month + 1, day: day, time: time, weekday: weekday)
    }

    /// Checks the fields and the weekday (0 = Monday); seconds since 1970, GMT.
    private static func date(
        year: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int),
        weekday: Int
    ) -> Date? {
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            time.hour <= 23, time.minute <= 59, time.second <= 60
        else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        // 1970-01-01 was a Thursday (3 when Monday is 0).
        guard ((days % 7) + 7 + 3) % 7 == weekday else { return nil }
        let seconds = days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The year of a day count since 1970-01-01 (`daysFromCivil` inverted, as far as the year).
    private static func year(ofDay days: Int) -> Int {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let month = mp < 10 ? mp + 3 : mp - 9
        return yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// A cursor over the bytes; each method consumes only on success.
    private struct Reader {
        let bytes: [UInt8]
        var index = 0
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }

        mutating func literal(_ text: String) -> Bool {
            let expected = Array(text.utf8)
            guard bytes.count - index >= expected.count,
                bytes[index..<index + expected.count].elementsEqual(expected)
            else { return false }
            index += expected.count
            return true
        }

        /// The index in `names` of the name found here.
        mutating func name(_ names: [String]) -> Int? {
            for (position, name) in names.enumerated() where literal(name) { return position }
            return nil
        }

        /// Exactly `count` ASCII digits.
        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for byte in bytes[index..<index + count] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            index += count
            return value
        }

        /// `HH:MM:SS`
        mutating func time() -> (hour: Int, minute: Int, second: Int)? {
            let start = index
            guard let hour = digits(2), literal(":"), let minute = digits(2), literal(":"), let second = digits(2)
            else {
                index = start
                return nil
            }
            return (hour, minute, second)
        }
    }
}

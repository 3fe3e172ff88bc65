#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Numbers from outside (the service's answers, a token's claims) are checked before they are used:
/// a `Double` such as `exp: 1e300` or a lifetime of 2e14 days turns into a date no formatter can
/// show and traps the first integer conversion. Out of range is treated as absent.
public enum OutsideNumbers {
    /// The latest instant authctl accepts from outside: 9999-12-31T23:59:59Z, the last one ISO 8601
    /// output can write with four year digits.
    public static let latestEpochSeconds: Double = 253_402_300_799

    /// Seconds since 1970 as a date, when finite and between 1970 and the year 9999.
    public static func date(epochSeconds value: Double) -> Date? {
        guard value.isFinite, value >= 0, value <= latestEpochSeconds else { return nil }
        return Date(timeIntervalSince1970: value)
    }

    /// A duration in seconds, when finite and between 0 and `maximum`.
    public static func seconds(_ value: Double, atMost maximum: Double) -> Double? {
        guard value.isFinite, value >= 0, value <= maximum else { return nil }
        return value
    }
}

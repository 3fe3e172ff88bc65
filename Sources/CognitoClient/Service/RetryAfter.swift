#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `Retry-After` header of a throttled or unavailable answer (RFC 9110 §10.2.3): a number of
/// seconds, or an HTTP date (`HTTPDate`).
public enum RetryAfter {
    /// Seconds from `now` the header asks to wait, never negative; nil when absent or unreadable.
    public static func seconds(_ value: String?, now: Date) -> Double? {
        guard let text = value?.trimmedBlanks(), !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Digits only; a huge number saturates rather than traps.
            return Double(text).map { min($0, 1e9) }
        }
        guard let date = HTTPDate.parse(text, now: now) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }
}

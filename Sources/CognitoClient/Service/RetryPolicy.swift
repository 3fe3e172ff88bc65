#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Up to `maxAttempts` tries with exponential backoff and full jitter. Only failures where
/// repeating is safe are retried: throttling and a connection never made always (the service
/// did nothing), failures after the request may have been sent (reset, timeout, HTTP 5xx) only
/// for idempotent operations.
public struct RetryPolicy: Sendable {
    public var maxAttempts: Int
    public var baseDelay: Double
    public var maxDelay: Double
    /// Sleeps for the given seconds; injectable so tests run without waiting.
    public var sleep: @Sendable (Double) -> Void
    /// Returns a number in 0..<1; injectable for deterministic tests.
    public var random: @Sendable () -> Double
    /// The longest `Retry-After` honoured: a service asking for more is not retried (the command
    /// ends with its answer rather than hanging).
    public var maxRetryAfter: Double = 10
    /// The command's time on the network (`--timeout`): waits draw from it, and no retry is made
    /// that could not finish within it.
    public var budget: TimeBudget?
    /// Told of every retry decision (`--debug`); nil: nothing is made of them.
    public var observer: ServiceObserver?

    public init(
        maxAttempts: Int = 3, baseDelay: Double = 0.2, maxDelay: Double = 2.0,
        sleep: @escaping @Sendable (Double) -> Void = RetryPolicy.sleep(seconds:),
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.sleep = sleep
        self.random = random
    }

    /// Sleeps for `seconds` (nanosleep, resumed after a signal), as Thread.sleep would.
    public static func sleep(seconds: Double) {
        guard seconds > 0, seconds.isFinite else { return }
        let whole = seconds.rounded(.down)
        var request = timespec(tv_sec: Int(whole), tv_nsec: Int((seconds - whole) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR {
            request = remaining
        }
    }

    public static let standard = RetryPolicy()
    public static let none = RetryPolicy(maxAttempts: 1)

    /// Delay before attempt `attempt + 1` (attempt counts from 1): full jitter over an exponential cap.
    public func delay(afterAttempt attempt: Int) -> Double {
        let cap = min(maxDelay, baseDelay * pow(2, Double(attempt - 1)))
        return cap * random()
    }

    /// The wait before retrying `error` after `attempt`, or nil for no retry: the service's
    /// `Retry-After` when it gave one (never less than the backoff), none when that is longer
    /// than `maxRetryAfter`, none when the wait would use up the time budget.
    public func wait(afterAttempt attempt: Int, for error: CognitoError) -> Double? {
        var seconds = delay(afterAttempt: attempt)
        if let asked = error.retryAfter {
            guard asked <= maxRetryAfter else { return nil }
            seconds = max(seconds, asked)
        }
        if let budget, seconds >= budget.remaining { return nil }
        return seconds
    }

    /// Sleeps `seconds`, counted against the budget.
    func pause(_ seconds: Double) {
        if let budget { budget.spend { sleep(seconds) } } else { sleep(seconds) }
    }

    public func shouldRetry(_ error: CognitoError, idempotent: Bool) -> Bool {
        if error.isThrottling && error.isType("TooManyRequestsException", "ThrottlingException") {
            return true
        }
        // Not sent for want of a connection: worth another try. (A TLS failure is not sent either,
        // but a certificate does not change in a second.)
        if error.certainlyNotSent && error.transportKind == .notConnected { return true }
        guard idempotent else { return false }
        switch error.kind {
        case .transport:
            return error.transportKind == .connection || error.transportKind == .timeout
        case .service, .malformedResponse:
            return error.isServerError
        case .unsupportedChallenge, .invalidInput:
            return false
        }
    }
}

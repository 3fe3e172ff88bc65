import Foundation

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

    public init(maxAttempts: Int = 3, baseDelay: Double = 0.2, maxDelay: Double = 2.0,
                sleep: @escaping @Sendable (Double) -> Void = { Thread.sleep(forTimeInterval: $0) },
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.sleep = sleep
        self.random = random
    }

    public static let standard = RetryPolicy()
    public static let none = RetryPolicy(maxAttempts: 1)

    /// Delay before attempt `attempt + 1` (attempt counts from 1): full jitter over an exponential cap.
    public func delay(afterAttempt attempt: Int) -> Double {
        let cap = min(maxDelay, baseDelay * pow(2, Double(attempt - 1)))
        return cap * random()
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

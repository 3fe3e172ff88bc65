import CognitoClient
import Dispatch

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Time for pacing: a monotonic clock and a sleep, injected so tests run the arithmetic without waiting.
package protocol PaceClock: AnyObject {
    /// Seconds on a monotonic clock (only differences mean anything).
    func now() -> Double
    func sleep(_ seconds: Double)
}

/// The process's monotonic clock and nanosleep.
package final class MonotonicClock: PaceClock {
    package init() {}
    package func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
    package func sleep(_ seconds: Double) { RetryPolicy.sleep(seconds: seconds) }
}

/// A token bucket: `rate` tokens a second, at most `capacity` saved up. `take()` says how long to
/// wait before the next call may go; the token is spent when the wait ends (the bucket may go
/// below zero meanwhile, which is the wait).
package struct TokenBucket {
    package private(set) var rate: Double
    package let capacity: Double
    private var tokens: Double
    private var last: Double

    /// Starts full (`capacity` tokens) at `now`.
    package init(rate: Double, capacity: Double = 1, now: Double) {
        self.rate = max(rate, 0.001)
        self.capacity = max(capacity, 1)
        self.tokens = max(capacity, 1)
        self.last = now
    }

    private mutating func refill(_ now: Double) {
        if now > last {
            tokens = min(capacity, tokens + (now - last) * rate)
            last = now
        }
    }

    /// Spends one token; returns the seconds to wait before using it (0 when one was there).
    package mutating func take(now: Double) -> Double {
        refill(now)
        tokens -= 1
        return tokens >= 0 ? 0 : -tokens / rate
    }

    /// A new rate from `now` on (tokens already saved are kept).
    package mutating func setRate(_ newRate: Double, now: Double) {
        refill(now)
        rate = max(newRate, 0.001)
    }

    /// Drops the saved tokens (after a refusal: no burst into a service that just said no).
    package mutating func drain(now: Double) {
        refill(now)
        tokens = min(tokens, 0)
    }
}

/// The pace of one category of calls: a token bucket whose rate adapts, AIMD as TCP does. A
/// throttling answer halves the rate (once per `cooldown`: a burst of refusals is one signal);
/// each call that goes through raises it by `increasePerSecond / rate`, so it climbs back by about
/// `increasePerSecond` every second, never above `ceiling` (the rate asked for).
package final class Pacer {
    package let name: String
    package let ceiling: Double
    package let floor: Double
    package let increasePerSecond: Double
    package let cooldown: Double
    private let clock: PaceClock
    private var bucket: TokenBucket
    private var lastDecrease: Double = -.infinity
    /// How many throttling answers were seen, and how many times the rate was halved.
    package private(set) var throttles = 0
    package private(set) var decreases = 0
    /// Calls may be made side by side (BulkOperation's workers): every change under this lock.
    private let lock = Lock()

    package init(
        name: String, rate: Double, clock: PaceClock, floor: Double = 0.5, increasePerSecond: Double = 1,
        cooldown: Double = 1
    ) {
        self.name = name
        self.ceiling = rate
        self.floor = min(floor, rate)
        self.increasePerSecond = increasePerSecond
        self.cooldown = cooldown
        self.clock = clock
        // Two tokens: a call that took longer than its slot is caught up with the next one, so a
        // slow answer does not cost the run its time (the service's own bucket holds a second's worth).
        self.bucket = TokenBucket(rate: rate, capacity: rate >= 2 ? 2 : 1, now: clock.now())
    }

    /// The rate now, in calls per second.
    package var rate: Double { lock.withLock { bucket.rate } }

    /// The window a count of calls made at this pace is measured over: the time taken plus the
    /// burst the full bucket lets through at once. A rate over it never exceeds the pace (a run
    /// of one user in 10 ms is not 100 a second).
    package func pacedWindow(_ elapsed: Double) -> Double { elapsed + bucket.capacity / ceiling }

    /// Waits until the next call may go (the turn is taken at once, the wait is outside the lock).
    package func waitForTurn() {
        let wait = lock.withLock { bucket.take(now: clock.now()) }
        if wait > 0 { clock.sleep(wait) }
    }

    /// The service said TooManyRequestsException: slow down.
    package func throttled() {
        lock.lock()
        defer { lock.unlock() }
        throttles += 1
        let now = clock.now()
        guard now - lastDecrease >= cooldown else { return }
        lastDecrease = now
        decreases += 1
        bucket.setRate(max(floor, bucket.rate / 2), now: now)
        bucket.drain(now: now)
    }

    /// A call went through: speed up a little, back towards the ceiling.
    package func succeeded() {
        lock.lock()
        defer { lock.unlock() }
        let rate = bucket.rate
        guard rate < ceiling else { return }
        bucket.setRate(min(ceiling, rate + increasePerSecond / rate), now: clock.now())
    }
}

import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The time one command may spend on the network (`--timeout`): every request, the waits between
/// retries and a refresh draw from it, so a command ends within it whatever the retries. Time
/// spent elsewhere (a person typing a code at a prompt) is not counted.
public final class TimeBudget: Sendable {
    public let seconds: Double
    private let spentNanoseconds = Mutex<UInt64>(0)

    public init(seconds: Double) {
        self.seconds = seconds
    }

    /// What is left, in seconds (0 when spent).
    public var remaining: Double {
        max(0, seconds - Double(spentNanoseconds.withLock { $0 }) / 1e9)
    }

    /// Runs `body` and counts its (monotonic) time against the budget.
    public func spend<T>(_ body: () throws -> T) rethrows -> T {
        let start = DispatchTime.now().uptimeNanoseconds
        defer {
            let elapsed = DispatchTime.now().uptimeNanoseconds &- start
            spentNanoseconds.withLock { $0 &+= elapsed }
        }
        return try body()
    }
}

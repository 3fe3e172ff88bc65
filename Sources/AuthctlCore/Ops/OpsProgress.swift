#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Progress of a bulk run on stderr: on a terminal a bar redrawn in place (done / total, rate,
/// ETA, failures), at most ten times a second; otherwise a plain line every `interval` seconds.
/// Nothing on stdout.
package final class OpsProgress {
    private let console: Console
    private let clock: PaceClock
    private let total: Int?
    private let startDone: Int
    private let started: Double
    private let onTerminal: Bool
    private let interval: Double
    /// The paced window of an elapsed time (`Pacer.pacedWindow`): the rate is users over it.
    private let window: (Double) -> Double
    private var lastShown: Double
    package private(set) var lines = 0

    package init(
        console: Console, clock: PaceClock, total: Int?, alreadyDone: Int, interval: Double = 10,
        window: @escaping (Double) -> Double = { $0 }
    ) {
        self.console = console
        self.clock = clock
        self.total = total
        self.startDone = alreadyDone
        self.started = clock.now()
        self.onTerminal = console.messagesGoToTerminal
        self.interval = interval
        self.window = window
        self.lastShown = started
    }

    /// After each user.
    package func update(done: Int, failed: Int, force: Bool = false) {
        let now = clock.now()
        let every = onTerminal ? 0.1 : interval
        guard force || now - lastShown >= every else { return }
        lastShown = now
        lines += 1
        console.status(
            Self.line(done: done, total: total, failed: failed, rate: rate(done: done, now: now), bar: onTerminal),
            done: false)
    }

    /// The last state, and the bar's line ended.
    package func finish(done: Int, failed: Int) {
        guard onTerminal || lines > 0 else { return }
        console.status(
            Self.line(
                done: done, total: total, failed: failed, rate: rate(done: done, now: clock.now()), bar: onTerminal),
            done: true)
    }

    private func rate(done: Int, now: Double) -> Double {
        let elapsed = window(now - started)
        return elapsed > 0 ? Double(done - startDone) / elapsed : 0
    }

    /// `[#########...........]  450/2000  22%  19.9/s  ETA 1:18  0 failed`, or without the bar
    /// `ops: 450/2000 users done (22%), 19.9/s, ETA 1:18, 0 failed`.
    package static func line(done: Int, total: Int?, failed: Int, rate: Double, bar: Bool) -> String {
        let fraction = total.map { $0 > 0 ? min(1, Double(done) / Double($0)) : 1 }
        let count = total.map { "\(done)/\($0)" } ?? "\(done)"
        let percent = fraction.map { " \(Int(($0 * 100).rounded(.down)))%" } ?? ""
        let speed = Numbers.oneDecimal(rate) + "/s"
        let eta: String
        if let total, rate > 0 {
            eta = "ETA " + clockTime(Double(max(0, total - done)) / rate)
        } else {
            eta = "ETA --:--"
        }
        if bar {
            let width = 24
            let filled = Int((fraction ?? 0) * Double(width))
            let drawn = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            return "[\(drawn)] \(count)\(percent)  \(speed)  \(eta)  \(failed) failed"
        }
        return
            "ops: \(count) \(total ?? done == 1 ? "user" : "users") done\(percent.isEmpty ? "" : " (\(percent.dropFirst()))"), \(speed), \(eta), \(failed) failed"
    }

    /// `1:05:09`, `3:08`.
    package static func clockTime(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        let (h, m, s) = (whole / 3600, whole / 60 % 60, whole % 60)
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
    }
}

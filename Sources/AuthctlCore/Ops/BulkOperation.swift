import CProcess
import CognitoClient
import Dispatch

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A run was stopped by Ctrl-C (SIGINT), SIGTERM or SIGHUP after its call in flight: the checkpoint
/// is written, and running the same command again finishes the rest.
package struct OpsInterrupted: Error {
    package var signal: Int32
}

/// The engine of `ops signout`: counts the selection (the plan), then lists it again page by page
/// and acts on each user as it comes, at the pace of two adaptive token buckets (the user-update
/// calls and the listing calls), with a checkpoint after every user and an audit line before it.
package final class BulkOperation {
    package struct Plan {
        package var total: Int
        package var firstUsers: [String]
        package var pages: Int
    }

    package let service: CognitoService
    package let poolId: String
    package let action: OpsAction
    package let selection: UserSelection
    package let updates: Pacer
    package let listing: Pacer
    package let clock: PaceClock
    /// Jitter for the backoff after a 5xx or a timeout, in 0..<1 (injectable).
    package var random: () -> Double = { Double.random(in: 0..<1) }
    /// Whether a termination signal has arrived (injectable: tests stop a run on cue).
    package var stopRequested: () -> Int32 = { authctl_pending_termination_signal() }
    /// Attempts for a call that fails with a 5xx or a timeout (throttling is retried without limit).
    package var maxAttempts = 6
    /// Throttling answers absorbed, not reported as failures.
    package var throttled: Int { counterLock.withLock { throttledCount } }
    private var throttledCount = 0
    private let counterLock = Lock()
    /// Connections for calls side by side (one transport each): the run keeps up to this many
    /// users in flight, so the pace is the bucket's, not one answer's latency. Empty: `service` alone.
    package var workers: [CognitoService] = []

    package init(
        service: CognitoService, poolId: String, action: OpsAction, selection: UserSelection,
        rate: Double, listingRate: Double, clock: PaceClock
    ) {
        self.service = service
        self.poolId = poolId
        self.action = action
        self.selection = selection
        self.clock = clock
        updates = Pacer(name: "updates", rate: rate, clock: clock)
        listing = Pacer(name: "listing", rate: listingRate, clock: clock)
    }

    /// The users, from `start`.
    package func source(from start: PageCursor) throws -> UserSource {
        switch selection {
        case .users(let names): return ListSource(names, start: start)
        case .file(let path, _): return try FileSource(path: path, start: start)
        case .group, .filter, .allUsers:
            return ListingSource(service: service, poolId: poolId, selection: selection, start: start) {
                [unowned self] body in
                try self.paced(self.listing, body)
            }
        }
    }

    /// Counts the selection, page by page, keeping only the first ten names.
    package func plan() throws -> Plan {
        let users = try source(from: PageCursor())
        var plan = Plan(total: 0, firstUsers: [], pages: 0)
        while let page = try users.nextPage() {
            plan.pages += 1
            plan.total += page.count
            plan.firstUsers += page.prefix(max(0, 10 - plan.firstUsers.count))
        }
        return plan
    }

    /// `body` at `pacer`'s pace: throttling slows the pace and tries again, without limit; a 5xx,
    /// an unreadable answer or a timeout is tried again after a jittered backoff, up to
    /// `maxAttempts`. (Every call made here is safe to repeat.)
    package func paced(_ pacer: Pacer, _ body: () throws -> Void) throws {
        var attempt = 0
        while true {
            pacer.waitForTurn()
            do {
                try body()
                pacer.succeeded()
                return
            } catch let error as CognitoError where error.isThrottling {
                counterLock.withLock { throttledCount += 1 }
                pacer.throttled()
                if let signal = Optional(stopRequested()), signal != 0 { throw OpsInterrupted(signal: signal) }
            } catch let error as CognitoError where Self.worthRetrying(error) {
                attempt += 1
                guard attempt < maxAttempts else { throw error }
                let cap = min(8.0, 0.25 * pow(2, Double(attempt)))
                clock.sleep(cap * (0.5 + random() / 2))
            }
        }
    }

    package static func worthRetrying(_ error: CognitoError) -> Bool {
        switch error.kind {
        case .service: return error.isServerError
        case .malformedResponse: return true
        case .transport: return true
        case .unsupportedChallenge, .invalidInput: return false
        }
    }

    /// A refusal that would be the same for every user (the credentials, the pool): the run stops.
    package static func stopsTheRun(_ error: CognitoError) -> Bool {
        if error.kind == .transport { return true }
        guard error.kind == .service, !error.isServerError else { return false }
        return error.refusal == .awsCredentialsRefused || error.refusal == .resourceNotFound
            || error.refusal?.deniesAuthorization == true
    }

    /// One user: the action's calls, then its outcome. Throws only what stops the run.
    package func act(on username: String) throws -> (result: OpsResult, requestIds: [String]) {
        try act(on: username, using: service)
    }

    package func act(on username: String, using service: CognitoService) throws -> (
        result: OpsResult, requestIds: [String]
    ) {
        var requestIds: [String] = []
        do {
            try action.perform(on: service, poolId: poolId, username: username) { call in
                try paced(updates) {
                    defer { if let id = service.lastRequestId { requestIds.append(id) } }
                    try call()
                }
            }
            return (action.success, requestIds)
        } catch let error as CognitoError {
            if error.refusal == .userNotFound { return (.notFound, requestIds) }
            if Self.stopsTheRun(error) { throw error }
            let code = error.errorType ?? (error.isServerError ? "HTTP\(error.httpStatus ?? 500)" : error.kind.rawValue)
            return (.failed(code: code), requestIds)
        }
    }
}

extension BulkOperation {
    package typealias Outcome = (result: OpsResult, requestIds: [String])

    /// Acts on `users` with up to `workers.count` calls in flight (each worker on its own
    /// connection, every call through the shared pacer), and hands each outcome to `commit` in the
    /// users' order, one at a time. After a stop (a signal, an error that stops the run) no user
    /// is started; those in flight finish, and the outcomes that follow on from the last committed
    /// are committed before the stop is thrown.
    package func actInOrder(_ users: [String], commit: @escaping (Int, Outcome) throws -> Void) throws {
        if workers.count < 2 {
            for (index, username) in users.enumerated() {
                let signal = stopRequested()
                if signal != 0 { throw OpsInterrupted(signal: signal) }
                try commit(index, try act(on: username, using: workers.first ?? service))
            }
            return
        }
        let shared = InFlight()
        do {
            let group = DispatchGroup()
            for worker in workers.prefix(users.count) {
                group.enter()
                Threads.start(stackSize: 1 << 20) {
                    defer { group.leave() }
                    while let index = shared.nextIndex(of: users.count, signal: self.stopRequested) {
                        do {
                            let outcome = try self.act(on: users[index], using: worker)
                            try shared.finish(index, outcome, commit: commit)
                        } catch {
                            shared.record(error)
                        }
                    }
                }
            }
            group.wait()
        }
        let stop = shared.stop
        if let stop { throw stop }
    }
}

/// The state `actInOrder`'s workers share, under one lock: the next user to start, the outcomes
/// waiting for their turn to be committed, and what stopped the run.
// Unchecked: every stored property is read and written only while `lock` is held.
private final class InFlight: @unchecked Sendable {
    private let lock = Lock()
    private var next = 0
    private var committed = 0
    private var finished: [Int: BulkOperation.Outcome] = [:]
    private var stopError: Error?

    package var stop: Error? { lock.withLock { stopError } }

    /// The next user's index, nil once all are started or the run is stopping.
    package func nextIndex(of count: Int, signal: () -> Int32) -> Int? {
        lock.lock()
        defer { lock.unlock() }
        let arrived = signal()
        if arrived != 0 { remember(OpsInterrupted(signal: arrived)) }
        guard stopError == nil, next < count else { return nil }
        next += 1
        return next - 1
    }

    /// Keeps `outcome`, then commits every outcome that follows on from the last committed.
    package func finish(
        _ index: Int, _ outcome: BulkOperation.Outcome, commit: (Int, BulkOperation.Outcome) throws -> Void
    ) throws {
        lock.lock()
        defer { lock.unlock() }
        finished[index] = outcome
        while let ready = finished.removeValue(forKey: committed) {
            try commit(committed, ready)
            committed += 1
        }
    }

    package func record(_ error: Error) {
        lock.withLock { remember(error) }
    }

    /// An error that stops the run wins over an interruption: its message says more.
    private func remember(_ error: Error) {
        if stopError == nil || (stopError is OpsInterrupted && !(error is OpsInterrupted)) { stopError = error }
    }
}

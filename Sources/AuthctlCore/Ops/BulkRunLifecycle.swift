import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// One bulk run of an operator action, from start to outcome: where the run stands (its
/// checkpoint), its plan, and acting (a fresh start, a resumed run, or a retry of a finished
/// run's failed users), each ending in one `BulkRunOutcome`. The command keeps its options, the
/// plan's words, the confirmation and the output.
package final class BulkRunLifecycle {
    /// Where an earlier run of the same action on the same selection left off.
    package enum Standing {
        /// No checkpoint (or `--restart`).
        case fresh
        /// Stopped part-way: the rest is done.
        case resumable(OpsCheckpoint)
        /// Finished with users that failed (the checkpoint names them): they are tried again.
        case failedUsersToRetry(OpsCheckpoint, users: [String])
        /// Finished: nothing left to do.
        case finished(OpsCheckpoint)
    }

    /// What a start or a resume acts on.
    package struct Plan {
        /// Users selected (an earlier run's count when resuming).
        package var total: Int
        /// The first usernames, as the service sent them (a fresh count only).
        package var firstUsers: [String]
        /// Done by earlier runs (the checkpoint's count).
        package var alreadyDone: Int
        package var remaining: Int { max(0, total - alreadyDone) }
    }

    package let admin: AdminService
    package let state: OpsStateDirectory
    package let action: OpsAction
    package let selection: UserSelection
    /// The checkpoint's and the default audit log's name.
    package let stem: String
    package let operation: BulkOperation
    /// Calls a second for the action, and for the listing.
    package let rate: Double
    package let listingRate: Double
    package let readRate: Double
    /// Calls each user costs in the update and read buckets (contain: its steps').
    package let callsPerUser: (updates: Int, reads: Int)
    private let context: CommandContext

    /// `rate` calls a second for the action (with users side by side, so an answer's latency does
    /// not set the pace), `listingRate` for the listing. Each user's calls run one after another,
    /// so the users in flight grow with the calls a user costs (`callsPerUser`, default the
    /// action's): enough for 200 ms answers, at most 16.
    package init(
        context: CommandContext, admin: AdminService, state: OpsStateDirectory, action: OpsAction,
        selection: UserSelection, rate: Double, listingRate: Double, readRate: Double = 100,
        callsPerUser: (updates: Int, reads: Int)? = nil, steps: UserSteps? = nil,
        clock: PaceClock = MonotonicClock()
    ) throws {
        self.context = context
        self.readRate = readRate
        let calls = callsPerUser ?? (action.callsPerUser, 0)
        self.callsPerUser = calls
        self.admin = admin
        self.state = state
        self.action = action
        self.selection = selection
        self.rate = rate
        self.listingRate = listingRate
        stem = OpsStateDirectory.stem(poolId: admin.poolId, action: action, selection: selection)
        operation = BulkOperation(
            service: admin.service, poolId: admin.poolId, action: action, selection: selection,
            rate: rate, listingRate: listingRate, readRate: readRate, clock: clock)
        operation.steps = steps
        let usersPerSecond = rate / Double(max(1, calls.updates))
        let secondsPerUser = 0.2 * Double(max(1, calls.updates + calls.reads))
        let inFlight = max(1, min(16, Int((usersPerSecond * secondsPerUser).rounded(.up))))
        if inFlight > 1 {
            operation.workers = try (0..<inFlight).map { _ in try admin.anotherService(context: context) }
        }
    }

    /// Where an earlier run left off. `restart` ignores its checkpoint; only a run that acts
    /// (`execute`) removes it (a dry run changes nothing).
    package func standing(restart: Bool, execute: Bool) throws -> Standing {
        if restart && execute { state.remove(stem) }
        guard !restart, let earlier = try state.load(stem) else { return .fresh }
        guard earlier.complete else { return .resumable(earlier) }
        // The private checkpoint names them, never the audit log.
        let failedUsers = earlier.failedUsers ?? []
        return failedUsers.isEmpty ? .finished(earlier) : .failedUsersToRetry(earlier, users: failedUsers)
    }

    /// The selection counted page by page, or an earlier run's count when resuming.
    package func plan(resuming earlier: OpsCheckpoint?) throws -> Plan {
        var plan = Plan(total: 0, firstUsers: [], alreadyDone: 0)
        if let earlier, let counted = earlier.total {
            plan.total = counted
        } else {
            let counted = try operation.plan()
            plan.total = counted.total
            plan.firstUsers = counted.firstUsers
        }
        plan.alreadyDone = earlier?.counts.done ?? 0
        return plan
    }

    /// Seconds a run of `users` takes at the pace asked for (listing pages included).
    package func expectedSeconds(users: Int, listing: Bool = true) -> Double {
        // The buckets fill side by side: the slower one sets the pace.
        let acting = max(
            Double(users * callsPerUser.updates) / rate, Double(users * callsPerUser.reads) / readRate)
        return listing ? acting + Double(users / CognitoService.maximumPageSize + 1) / listingRate : acting
    }

    /// Starts, or resumes from `earlier`, writing every user's outcome to `auditLog`.
    package func run(_ plan: Plan, resuming earlier: OpsCheckpoint?, auditLog: String) throws -> BulkRunOutcome {
        let audit = try OpsAuditLog(path: auditLog)
        let now = context.now()
        var checkpoint =
            earlier
            ?? OpsCheckpoint(
                userPoolId: admin.poolId, action: action.rawValue, selection: selection.key,
                total: plan.total, auditLog: auditLog, auditOffset: audit.size,
                startedAt: now, updatedAt: now)
        if checkpoint.auditLog != auditLog {
            // Another audit log this time: nothing in it is after the checkpoint yet.
            checkpoint.auditLog = auditLog
            checkpoint.auditOffset = audit.size
        }
        try state.save(checkpoint, stem)
        let (stop, meanRate) = act(
            operation, &checkpoint, stem: stem, audit: audit, total: plan.total,
            alreadyDone: plan.alreadyDone)
        return BulkRunOutcome(
            checkpoint: checkpoint, total: plan.total, throttled: operation.throttled, stop: stop,
            meanRate: meanRate)
    }

    /// A finished run's failed users (from its checkpoint) acted on again, at the same pace, into
    /// the same audit log; their new outcomes replace `failed` in the run's counts and list. An
    /// interrupted retry keeps what it did in the checkpoint: the next rerun retries only the rest.
    package func retry(_ users: [String], of earlier: OpsCheckpoint, auditLog: String) throws -> BulkRunOutcome {
        let retrying = BulkOperation(
            service: admin.service, poolId: admin.poolId, action: action, selection: .users(users),
            rate: rate, listingRate: listingRate, readRate: readRate, clock: operation.clock)
        retrying.workers = operation.workers
        retrying.steps = operation.steps
        let retryStem = stem + ".retry"
        state.remove(retryStem)
        let audit = try OpsAuditLog(path: auditLog)
        let now = context.now()
        var retried = OpsCheckpoint(
            userPoolId: admin.poolId, action: action.rawValue, selection: "retry:" + selection.key,
            total: users.count, auditLog: auditLog, auditOffset: audit.size,
            startedAt: now, updatedAt: now)
        retried.stepsDone = earlier.stepsDone
        let (stop, meanRate) = act(
            retrying, &retried, stem: retryStem, audit: audit, total: users.count, alreadyDone: 0)
        var merged = earlier
        // The retried users are committed in order: the first `done` of them have a new outcome.
        let retriedUsers = Set(users.prefix(retried.counts.done))
        merged.failedUsers =
            (earlier.failedUsers ?? []).filter { !retriedUsers.contains($0) } + (retried.failedUsers ?? [])
        merged.counts.absorb(retry: retried.counts, stillFailing: merged.failedUsers?.count ?? 0)
        merged.stepsDone = retried.stepsDone
        merged.updatedAt = context.now()
        try state.save(merged, stem)
        state.remove(retryStem)
        return BulkRunOutcome(
            checkpoint: merged, total: earlier.total ?? merged.counts.done, throttled: retrying.throttled,
            stop: stop, meanRate: meanRate)
    }

    /// The one acting sequence of a start, a resume and a retry: the loop (the checkpoint holding
    /// the user's audit line, then the line, per user) with progress on stderr; why it stopped
    /// early, and users a second.
    private func act(
        _ operation: BulkOperation, _ checkpoint: inout OpsCheckpoint, stem: String, audit: OpsAuditLog,
        total: Int, alreadyDone: Int
    ) -> (stop: Error?, meanRate: Double) {
        let record = BulkRecord(
            state: state, stem: stem, audit: audit,
            who: .current(accessKeyId: admin.credentials.accessKeyId, environment: context.environment),
            now: context.now)
        let progress = OpsProgress(
            console: context.console, clock: operation.clock, total: total, alreadyDone: alreadyDone,
            window: operation.updates.pacedWindow)
        let doneBefore = checkpoint.counts.done
        let started = operation.clock.now()
        let stop = operation.runDeferringSignals(&checkpoint, record: record, progress: progress)
        let window = operation.updates.pacedWindow(operation.clock.now() - started)
        return (stop, Double(checkpoint.counts.done - doneBefore) / window)
    }
}

/// How a bulk run that acted ended.
package struct BulkRunOutcome {
    /// The run's checkpoint (a retry's merged into the run it retried).
    package var checkpoint: OpsCheckpoint
    package var total: Int
    /// Throttling answers absorbed by slowing down.
    package var throttled: Int
    /// Why it stopped before the end: `OpsInterrupted`, or the failure that stopped it; nil when it ran to the end.
    package var stop: Error?
    /// Users a second in this run.
    package var meanRate: Double
}

extension OpsAuditLog.Entry.Operator {
    /// The operator, for the audit log: the AWS access key id, the process's real user@host, and
    /// SUDO_USER as a claim (LocalOperator).
    package static func current(accessKeyId: String, environment: [String: String]) -> Self {
        let local = LocalOperator(environment: environment)
        return .init(
            accessKeyId: accessKeyId, local: "\(local.user)@\(local.host)", claimedSudoUser: local.claimedSudoUser)
    }
}

extension OpsStateDirectory {
    /// A users file given as standard input (`--users-file -`), copied here under its digest: it
    /// is read twice (counted, then acted on), and a rerun with the same list resumes.
    package func keepStandardInput(_ console: Console) throws -> UserSelection {
        var digest = Digest.Hasher64()
        let name = "stdin-\(getpid()).users"
        let fd = try directory.openFile(name, flags: O_WRONLY | O_CREAT | O_TRUNC)
        defer { Glibc.close(fd) }
        while let line = console.readLine() {
            let bytes = Array((line + "\n").utf8)
            digest.add(bytes)
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        }
        let kept = "stdin-\(digest.hex).users"
        renameat(directory.descriptor, name, directory.descriptor, kept)
        return .file(path: directory.path + "/" + kept, digest: digest.hex)
    }
}

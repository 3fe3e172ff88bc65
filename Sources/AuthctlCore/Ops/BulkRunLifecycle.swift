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
        /// Finished with users that failed (the audit log names them): they are tried again.
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
        /// Done by earlier runs, with the users their audit log recorded after the checkpoint.
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
    private let context: CommandContext

    /// `rate` calls a second for the action (with calls side by side, so an answer's latency does
    /// not set the pace: enough for 200 ms answers, at most 8), `listingRate` for the listing.
    package init(context: CommandContext, admin: AdminService, state: OpsStateDirectory, action: OpsAction,
                 selection: UserSelection, rate: Double, listingRate: Double, clock: PaceClock = MonotonicClock()) throws {
        self.context = context
        self.admin = admin
        self.state = state
        self.action = action
        self.selection = selection
        self.rate = rate
        self.listingRate = listingRate
        stem = OpsStateDirectory.stem(poolId: admin.poolId, action: action, selection: selection)
        operation = BulkOperation(service: admin.service, poolId: admin.poolId, action: action, selection: selection,
                                  rate: rate, listingRate: listingRate, clock: clock)
        let inFlight = max(1, min(8, Int((rate / 5).rounded(.up))))
        if inFlight > 1 {
            let settings = try context.settings
            operation.workers = (0..<inFlight).map { _ in admin.anotherService(settings: settings, context: context) }
        }
    }

    /// Where an earlier run left off. `restart` ignores its checkpoint; only a run that acts
    /// (`execute`) removes it (a dry run changes nothing).
    package func standing(restart: Bool, execute: Bool) throws -> Standing {
        if restart && execute { state.remove(stem) }
        guard !restart, let earlier = try state.load(stem) else { return .fresh }
        guard earlier.complete else { return .resumable(earlier) }
        // A later success in the audit log takes a user off the list.
        let failedUsers = earlier.counts.failed > 0
            ? OpsAuditLog.failedUsers(path: earlier.auditLog, pool: admin.poolId, action: action.auditName, since: earlier.startedAt)
            : []
        return failedUsers.isEmpty ? .finished(earlier) : .failedUsersToRetry(earlier, users: failedUsers)
    }

    /// The selection counted page by page, or an earlier run's count when resuming. A user
    /// recorded in the audit log after the checkpoint (a kill between the two writes) is done too.
    package func plan(resuming earlier: OpsCheckpoint?) throws -> Plan {
        var plan = Plan(total: 0, firstUsers: [], alreadyDone: 0)
        if let earlier, let counted = earlier.total {
            plan.total = counted
        } else {
            let counted = try operation.plan()
            plan.total = counted.total
            plan.firstUsers = counted.firstUsers
        }
        plan.alreadyDone = earlier.map {
            $0.counts.done + OpsAuditLog.entries(path: $0.auditLog, after: $0.auditOffset, pool: admin.poolId,
                                                 action: action.auditName).count
        } ?? 0
        return plan
    }

    /// Seconds a run of `users` takes at the pace asked for (listing pages included).
    package func expectedSeconds(users: Int, listing: Bool = true) -> Double {
        let acting = Double(users * action.callsPerUser) / rate
        return listing ? acting + Double(users / CognitoService.maximumPageSize + 1) / listingRate : acting
    }

    /// Starts, or resumes from `earlier`, writing every user's outcome to `auditLog`.
    package func run(_ plan: Plan, resuming earlier: OpsCheckpoint?, auditLog: String) throws -> BulkRunOutcome {
        let audit = try OpsAuditLog(path: auditLog)
        let now = context.now()
        var checkpoint = earlier ?? OpsCheckpoint(userPoolId: admin.poolId, action: action.rawValue, selection: selection.key,
                                                  total: plan.total, auditLog: auditLog, auditOffset: audit.size,
                                                  startedAt: now, updatedAt: now)
        if checkpoint.auditLog != auditLog {
            // Another audit log this time: nothing in it is after the checkpoint yet.
            checkpoint.auditLog = auditLog
            checkpoint.auditOffset = audit.size
        }
        try state.save(checkpoint, stem)
        let (stop, meanRate) = act(operation, &checkpoint, stem: stem, audit: audit, total: plan.total,
                                   alreadyDone: plan.alreadyDone)
        return BulkRunOutcome(checkpoint: checkpoint, total: plan.total, throttled: operation.throttled, stop: stop,
                              meanRate: meanRate)
    }

    /// A finished run's failed users acted on again, at the same pace, into the same audit log;
    /// their new outcomes replace `failed` in the run's counts. Resumable like any run: what an
    /// interrupted retry did is in the audit log, so the next rerun retries only the rest.
    package func retry(_ users: [String], of earlier: OpsCheckpoint, auditLog: String) throws -> BulkRunOutcome {
        let retrying = BulkOperation(service: admin.service, poolId: admin.poolId, action: action, selection: .users(users),
                                     rate: rate, listingRate: listingRate, clock: operation.clock)
        retrying.workers = operation.workers
        let retryStem = stem + ".retry"
        state.remove(retryStem)
        let audit = try OpsAuditLog(path: auditLog)
        let now = context.now()
        var retried = OpsCheckpoint(userPoolId: admin.poolId, action: action.rawValue, selection: "retry:" + selection.key,
                                    total: users.count, auditLog: auditLog, auditOffset: audit.size,
                                    startedAt: now, updatedAt: now)
        let (stop, meanRate) = act(retrying, &retried, stem: retryStem, audit: audit, total: users.count, alreadyDone: 0)
        var merged = earlier
        merged.counts.absorb(retry: retried.counts)
        merged.updatedAt = context.now()
        try state.save(merged, stem)
        state.remove(retryStem)
        return BulkRunOutcome(checkpoint: merged, total: earlier.total ?? merged.counts.done, throttled: retrying.throttled,
                              stop: stop, meanRate: meanRate)
    }

    /// The one acting sequence of a start, a resume and a retry: the loop (an audit line, then
    /// the checkpoint, per user) with progress on stderr; why it stopped early, and users a second.
    private func act(_ operation: BulkOperation, _ checkpoint: inout OpsCheckpoint, stem: String, audit: OpsAuditLog,
                     total: Int, alreadyDone: Int) -> (stop: Error?, meanRate: Double) {
        let record = BulkRecord(state: state, stem: stem, audit: audit,
                                who: .current(accessKeyId: admin.credentials.accessKeyId, environment: context.environment),
                                now: context.now)
        let progress = OpsProgress(console: context.console, clock: operation.clock, total: total, alreadyDone: alreadyDone)
        let doneBefore = checkpoint.counts.done
        let started = operation.clock.now()
        let stop = operation.runDeferringSignals(&checkpoint, record: record, progress: progress)
        let thisRun = operation.clock.now() - started
        return (stop, thisRun > 0 ? Double(checkpoint.counts.done - doneBefore) / thisRun : 0)
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
    /// The operator, for the audit log: the AWS access key id and the local user@host.
    package static func current(accessKeyId: String, environment: [String: String]) -> Self {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0 ? String(cString: name) : "unknown-host"
        let user = environment["USER"] ?? environment["LOGNAME"] ?? "unknown"
        return .init(accessKeyId: accessKeyId, local: "\(user)@\(host)")
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

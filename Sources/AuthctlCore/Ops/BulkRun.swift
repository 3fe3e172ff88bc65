import CProcess
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a bulk run keeps its state and record, and who runs it.
package struct BulkRecord {
    package let state: OpsStateDirectory
    package let stem: String
    package let audit: OpsAuditLog
    package let who: OpsAuditLog.Entry.Operator
    package let now: () -> Date

    package init(
        state: OpsStateDirectory,
        stem: String,
        audit: OpsAuditLog,
        who: OpsAuditLog.Entry.Operator,
        now: @escaping () -> Date
    ) {
        self.state = state
        self.stem = stem
        self.audit = audit
        self.who = who
        self.now = now
    }
}

extension BulkOperation {
    /// Acts on every user after `checkpoint`'s position, one by one: the calls, the checkpoint
    /// (counting the user, with its audit line), then the audit line. A line the checkpoint holds
    /// but the log lacks (a kill between the two writes) is written first. The users acted on are
    /// the selection's after the checkpoint's position, whatever the audit log says. Throws
    /// `OpsInterrupted` after a termination signal, or the error that stops the run, with the
    /// checkpoint written.
    package func run(_ checkpoint: inout OpsCheckpoint, record: BulkRecord, progress: OpsProgress) throws {
        let started = clock.now()
        let elapsedBefore = checkpoint.elapsed
        if let pending = checkpoint.lastLine, checkpoint.auditLog == record.audit.path {
            checkpoint.auditOffset = try record.audit.complete(pending)
        }
        func save(_ checkpoint: inout OpsCheckpoint) throws {
            checkpoint.elapsed = elapsedBefore + (clock.now() - started)
            checkpoint.updatedAt = record.now()
            try record.state.save(checkpoint, record.stem)
        }
        let ledger = StepLedger(record: record, save: save)
        self.ledger = steps == nil ? nil : ledger
        defer { self.ledger = nil }
        do {
            let users = try source(from: checkpoint.cursor)
            var skip = checkpoint.doneInPage
            while let page = try users.nextPage() {
                checkpoint.cursor = users.pageStart
                checkpoint.doneInPage = min(skip, page.count)
                let rest = Array(page.dropFirst(skip))
                // What stops the run (credentials refused, the service unreachable) is thrown with
                // the users not yet committed not counted: the next run starts with them.
                let page = CheckpointBox(checkpoint)
                ledger.page = page
                defer { checkpoint = page.value }
                try actInOrder(rest) { index, outcome in
                    try ledger.lock.withLock {
                        let username = rest[index]
                        // A failed user keeps its steps done: a retry of the finished run does only the rest.
                        if case .failed = outcome.result {
                        } else {
                            page.value.stepsDone?.removeValue(forKey: username)
                        }
                        if page.value.stepsDone?.isEmpty == true { page.value.stepsDone = nil }
                        let line = try OpsAuditLog.line(
                            self.entry(username, outcome.result, requestIds: outcome.requestIds, record))
                        page.value.counts.add(outcome.result)
                        if case .failed = outcome.result {
                            page.value.failedUsers = (page.value.failedUsers ?? []) + [username]
                        }
                        page.value.doneInPage += 1
                        page.value.lastLine = .init(offset: page.value.auditOffset, line: line)
                        try save(&page.value)
                        page.value.auditOffset = try record.audit.append(line)
                        progress.update(done: page.value.counts.done, failed: page.value.counts.failed)
                    }
                }
                skip = 0
            }
            checkpoint.complete = true
            try save(&checkpoint)
        } catch {
            try? save(&checkpoint)
            throw error
        }
    }

    /// `run` with Ctrl-C, SIGTERM and SIGHUP held until the calls in flight are committed; the
    /// progress finished; what stopped the run, if anything, returned for the summary to say.
    package func runDeferringSignals(_ checkpoint: inout OpsCheckpoint, record: BulkRecord, progress: OpsProgress)
        -> Error?
    {
        authctl_defer_termination_signals()
        var stop: Error?
        do {
            try run(&checkpoint, record: record, progress: progress)
        } catch {
            stop = error
        }
        _ = authctl_release_termination_signals()
        progress.finish(done: checkpoint.counts.done, failed: checkpoint.counts.failed)
        return stop
    }

    private func entry(_ username: String, _ result: OpsResult, requestIds: [String], _ record: BulkRecord)
        -> OpsAuditLog.Entry
    {
        var error: String?
        if case .failed(let code) = result { error = code }
        return OpsAuditLog.Entry(
            time: record.now(), pool: poolId, user: username, action: action.auditName, result: result.name,
            error: error, requestId: requestIds.last, requestIds: requestIds, operator: record.who)
    }
}

/// The checkpoint while a page's users are committed (from the workers' threads, one at a time).
final class CheckpointBox {
    var value: OpsCheckpoint
    init(_ value: OpsCheckpoint) { self.value = value }
}

/// A multi-step run's steps as they finish, from the workers' threads: each is in the checkpoint
/// (with its audit line pending) before its line is in the audit log, under the one lock the
/// users' commits take too, so a kill anywhere leaves a rerun to do only the steps left.
final class StepLedger {
    let lock = Lock()
    let record: BulkRecord
    let save: (inout OpsCheckpoint) throws -> Void
    var page: CheckpointBox?

    init(record: BulkRecord, save: @escaping (inout OpsCheckpoint) throws -> Void) {
        self.record = record
        self.save = save
    }

    func stepsDone(_ username: String) -> Set<String> {
        lock.withLock { Set(page?.value.stepsDone?[username] ?? []) }
    }

    func finished(_ username: String, _ outcome: StepOutcome, operation: BulkOperation) throws {
        try lock.withLock {
            guard let page else { return }
            let entry = OpsAuditLog.Entry(
                time: record.now(), pool: operation.poolId, user: username,
                action: operation.action.auditName + ":" + outcome.step, result: outcome.result,
                error: outcome.error, requestId: outcome.requestIds.last, requestIds: outcome.requestIds,
                operator: record.who, detail: outcome.detail)
            let line = try OpsAuditLog.line(entry)
            // A step that failed, or left the user exposed, is tried again by a rerun.
            if !outcome.tryAgain {
                page.value.stepsDone = page.value.stepsDone ?? [:]
                page.value.stepsDone?[username, default: []].append(outcome.step)
            }
            page.value.lastLine = .init(offset: page.value.auditOffset, line: line)
            try save(&page.value)
            page.value.auditOffset = try record.audit.append(line)
        }
    }
}

import CognitoClient
import CProcess
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
    /// Acts on every user after `checkpoint`'s position, one by one: the calls, an audit line,
    /// then the checkpoint. Users recorded in the audit log after the checkpoint was last written
    /// (a kill between the two writes) are counted, not acted on again. Throws `OpsInterrupted`
    /// after a termination signal, or the error that stops the run, with the checkpoint written.
    package func run(_ checkpoint: inout OpsCheckpoint, record: BulkRecord, progress: OpsProgress) throws {
        let started = clock.now()
        let elapsedBefore = checkpoint.elapsed
        var pending = OpsAuditLog.entries(path: record.audit.path, after: checkpoint.auditOffset,
                                          pool: poolId, action: action.auditName)
        func save(_ checkpoint: inout OpsCheckpoint) throws {
            checkpoint.elapsed = elapsedBefore + (clock.now() - started)
            checkpoint.updatedAt = record.now()
            try record.state.save(checkpoint, record.stem)
        }
        do {
            let users = try source(from: checkpoint.cursor)
            var skip = checkpoint.doneInPage
            while let page = try users.nextPage() {
                checkpoint.cursor = users.pageStart
                checkpoint.doneInPage = min(skip, page.count)
                let rest = Array(page.dropFirst(skip))
                var startedAt = 0
                // Users recorded in the audit log after the checkpoint (a kill between the two
                // writes) come first in the rest: counted, not acted on again.
                while startedAt < rest.count, let earlier = pending.first {
                    pending.removeFirst()
                    guard earlier.user == rest[startedAt] else { pending.removeAll(); break }
                    checkpoint.counts.add(earlier.result)
                    checkpoint.doneInPage += 1
                    checkpoint.auditOffset = earlier.end
                    try save(&checkpoint)
                    startedAt += 1
                }
                pending.removeAll()
                // What stops the run (credentials refused, the service unreachable) is thrown with
                // the users not yet committed not counted: the next run starts with them.
                let page = CheckpointBox(checkpoint)
                defer { checkpoint = page.value }
                let skipped = startedAt
                try actInOrder(Array(rest[startedAt...])) { index, outcome in
                    let username = rest[skipped + index]
                    page.value.auditOffset = try record.audit.append(self.entry(username, outcome.result, requestIds: outcome.requestIds, record))
                    page.value.counts.add(outcome.result)
                    page.value.doneInPage += 1
                    try save(&page.value)
                    progress.update(done: page.value.counts.done, failed: page.value.counts.failed)
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
    package func runDeferringSignals(_ checkpoint: inout OpsCheckpoint, record: BulkRecord, progress: OpsProgress) -> Error? {
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

    private func entry(_ username: String, _ result: OpsResult, requestIds: [String], _ record: BulkRecord) -> OpsAuditLog.Entry {
        var error: String?
        if case .failed(let code) = result { error = code }
        return OpsAuditLog.Entry(time: record.now(), pool: poolId, user: username, action: action.auditName, result: result.name,
                                 error: error, requestId: requestIds.last, requestIds: requestIds, operator: record.who)
    }
}

/// The checkpoint while a page's users are committed (from the workers' threads, one at a time).
private final class CheckpointBox {
    package var value: OpsCheckpoint
    package init(_ value: OpsCheckpoint) { self.value = value }
}

import CognitoClient
import Foundation

/// Where a bulk run keeps its state and record, and who runs it.
struct BulkRecord {
    let state: OpsStateDirectory
    let stem: String
    let audit: OpsAuditLog
    let who: OpsAuditLog.Entry.Operator
    let now: () -> Date
}

extension BulkOperation {
    /// Acts on every user after `checkpoint`'s position, one by one: the calls, an audit line,
    /// then the checkpoint. Users recorded in the audit log after the checkpoint was last written
    /// (a kill between the two writes) are counted, not acted on again. Throws `OpsInterrupted`
    /// after a termination signal, or the error that stops the run, with the checkpoint written.
    func run(_ checkpoint: inout OpsCheckpoint, record: BulkRecord, progress: OpsProgress) throws {
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
                for username in page.dropFirst(skip) {
                    let signal = stopRequested()
                    if signal != 0 { throw OpsInterrupted(signal: signal) }
                    if let earlier = pending.first {
                        pending.removeFirst()
                        if earlier.user == username {
                            checkpoint.counts.add(earlier.result)
                            checkpoint.doneInPage += 1
                            checkpoint.auditOffset = earlier.end
                            try save(&checkpoint)
                            continue
                        }
                        pending.removeAll()
                    }
                    // What stops the run (credentials refused, the service unreachable) is thrown with
                    // this user not counted: the next run starts with it.
                    let outcome = try act(on: username)
                    checkpoint.auditOffset = try record.audit.append(entry(username, outcome.result, requestIds: outcome.requestIds, record))
                    checkpoint.counts.add(outcome.result)
                    checkpoint.doneInPage += 1
                    try save(&checkpoint)
                    progress.update(done: checkpoint.counts.done, failed: checkpoint.counts.failed)
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

    private func entry(_ username: String, _ result: OpsResult, requestIds: [String], _ record: BulkRecord) -> OpsAuditLog.Entry {
        var error: String?
        if case .failed(let code) = result { error = code }
        return OpsAuditLog.Entry(time: record.now(), pool: poolId, user: username, action: action.auditName, result: result.name,
                                 error: error, requestId: requestIds.last, requestIds: requestIds, operator: record.who)
    }
}

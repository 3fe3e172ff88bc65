import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The life of a bulk ops command that changes users (ops signout, ops contain), written once:
/// where an earlier run stands, the plan (a dry run stops there), the confirmation, the run or a
/// retry of a finished run's failed users, the summary and the exit code. The command says what
/// it does per user (`action`, `steps`) and in words (`describe`, `summarize`).
struct BulkRunFlow {
    var options: BulkRunOptions
    var selection: UserSelectionOptions
    var action: OpsAction
    var steps: UserSteps? = nil
    var callsPerUser: (updates: Int, reads: Int)? = nil
    /// The plan's first line: what is done to how many users, at what pace, for how long.
    var describe: (_ selected: Int, _ remaining: Int, _ pace: QuotaPace, _ seconds: Double) -> String
    /// The summary after acting.
    var summarize: (OpsCheckpoint, _ total: Int, _ throttled: Int) -> String
    /// Called once confirmed, before the first change (contain: the record's first line).
    var starting: (UserSelection) throws -> Void = { _ in }
    /// What the report adds after acting (contain: the exposure).
    var finishing: (inout OpsRunReport) -> Void = { _ in }

    func run(in context: CommandContext, admin: AdminService, state: OpsStateDirectory, chosen: UserSelection? = nil)
        throws
    {
        let chosen = try chosen ?? selection.resolve(context, state)
        let update = QuotaPace.resolve(.userUpdate, explicit: options.rate, service: admin.service)
        let listing = QuotaPace.resolve(.userList, explicit: options.listingRate, service: admin.service)
        let read = QuotaPace.resolve(.userRead, explicit: nil, service: admin.service)
        let run = try BulkRunLifecycle(
            context: context, admin: admin, state: state, action: action, selection: chosen,
            rate: update.rate, listingRate: listing.rate, readRate: read.rate, callsPerUser: callsPerUser,
            steps: steps)
        let standing = try run.standing(restart: options.restart, execute: options.execute)
        let earlier: OpsCheckpoint?
        switch standing {
        case .fresh: earlier = nil
        case .resumable(let checkpoint), .failedUsersToRetry(let checkpoint, _), .finished(let checkpoint):
            earlier = checkpoint
        }
        var report = OpsRunReport(
            userPoolId: admin.poolId, action: action.auditName, selection: chosen.description,
            dryRun: !options.execute, ratePerSecond: update.rate, checkpoint: state.checkpointPath(run.stem),
            auditLog: options.auditLog ?? earlier?.auditLog ?? state.auditPath(run.stem))
        let pace = "user updates at \(Self.number(update.rate)) a second (\(update.origin))"

        switch standing {
        case .failedUsersToRetry(let earlier, let users):
            return try retry(users, of: earlier, report: report, run: run, pace: pace, context: context)
        case .finished(let earlier):
            report.take(earlier)
            report.complete = true
            report.textMessages = [
                "Nothing left to do: this run finished on \(Format.localTime(earlier.updatedAt)) (\(Format.counted(earlier.counts.done, "user")); checkpoint \(report.checkpoint)). Use --restart to do it again."
            ]
            return context.emit(report)
        case .fresh, .resumable:
            break
        }

        let plan = try run.plan(resuming: earlier)
        report.selected = plan.total
        report.firstUsers = plan.firstUsers
        report.expectedSeconds = run.expectedSeconds(users: plan.remaining)
        var text = [describe(plan.total, plan.remaining, update, report.expectedSeconds ?? 0)]
        if !report.firstUsers.isEmpty {
            let more = plan.total > report.firstUsers.count ? ", ..." : ""
            text.append(
                (report.firstUsers.count == 1 ? "First user: " : "First users: ")
                    + report.firstUsers.map { UntrustedText($0).description }.joined(separator: ", ") + more)
        }
        if let earlier {
            report.take(earlier)
            report.resumed = true
            text.append(
                "Resuming: \(plan.alreadyDone) of \(Format.counted(plan.total, "user")) \(plan.alreadyDone == 1 ? "was" : "were") done by an earlier run (checkpoint \(report.checkpoint)); \(options.execute ? "finishing" : "--execute finishes") the remaining \(plan.remaining)."
            )
        }
        guard options.execute else {
            report.textMessages = text + ["Dry run: nothing was changed. Add --execute to do it."]
            return context.emit(report)
        }
        text.forEach(context.console.message)
        try confirm(
            poolId: admin.poolId, chosen, everyUser: Self.selectsEveryUser(chosen, total: plan.total, admin: admin),
            context)
        try starting(chosen)
        try conclude(
            report, try run.run(plan, resuming: earlier, auditLog: report.auditLog), admin: admin, context: context)
    }

    /// A finished run's failed users acted on again, after the same confirmation; the plan said first.
    private func retry(
        _ users: [String], of earlier: OpsCheckpoint, report: OpsRunReport, run: BulkRunLifecycle, pace: String,
        context: CommandContext
    ) throws {
        var report = report
        report.take(earlier)
        report.resumed = true
        report.expectedSeconds = run.expectedSeconds(users: users.count, listing: false)
        let plural = users.count == 1 ? "user" : "users"
        let text = [
            "Retrying the \(users.count) \(plural) that failed in the run finished on \(Format.localTime(earlier.updatedAt)) (the audit log \(report.auditLog) names them): \(users.prefix(10).map { UntrustedText($0).description }.joined(separator: ", "))\(users.count > 10 ? ", ..." : ""), \(pace). --restart does every user again."
        ]
        guard options.execute else {
            report.textMessages = text + ["Dry run: nothing was changed. Add --execute to do it."]
            return context.emit(report)
        }
        text.forEach(context.console.message)
        try confirm(poolId: run.admin.poolId, run.selection, everyUser: run.selection == .allUsers, context)
        try starting(run.selection)
        try conclude(
            report, try run.retry(users, of: earlier, auditLog: report.auditLog), admin: run.admin, context: context)
    }

    /// The summary (stderr, or the JSON report) and the exit code of a run that acted.
    private func conclude(
        _ report: OpsRunReport, _ outcome: BulkRunOutcome, admin: AdminService, context: CommandContext
    )
        throws
    {
        let (checkpoint, total, stop) = (outcome.checkpoint, outcome.total, outcome.stop)
        var report = report
        report.meanRate = outcome.meanRate
        report.take(checkpoint)
        report.throttled = outcome.throttled
        report.complete = checkpoint.complete
        finishing(&report)
        report.textMessages.append(summarize(checkpoint, total, outcome.throttled) + " Audit log: \(report.auditLog)")
        context.emit(report)
        switch stop {
        case nil:
            if checkpoint.counts.failed > 0 {
                throw AuthctlError(
                    .someFailed,
                    "\(Format.counted(checkpoint.counts.failed, "user")) failed: the audit log \(report.auditLog) says which, with the service's error code; run the same command again to retry them"
                )
            }
        case let interrupted as OpsInterrupted:
            throw AuthctlError(
                .partiallyDone,
                "interrupted (signal \(interrupted.signal)) after \(checkpoint.counts.done) of \(Format.counted(total, "user")); the checkpoint is written: run the same command again to finish the remaining \(max(0, total - checkpoint.counts.done))"
            )
        case let error?:
            let failure = AuthctlError.from(error, endpoint: admin.endpoint)
            throw AuthctlError(
                failure.code,
                "\(failure.message)\nStopped after \(checkpoint.counts.done) of \(Format.counted(total, "user")); the checkpoint is written: run the same command again to finish the rest."
            )
        }
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : Numbers.oneDecimal(value)
    }

    /// Whether the selection is the whole pool: --all-users, or a group or filter that selects as
    /// many users as the pool has (`username ^= ""` selects them all), which asks what --all-users
    /// asks. The pool's count is DescribeUserPool's; unknown: not the whole pool.
    static func selectsEveryUser(_ chosen: UserSelection, total: Int, admin: AdminService) -> Bool {
        switch chosen {
        case .allUsers: return true
        case .group, .filter:
            guard total > 0, let pool = try? admin.service.describeUserPool(userPoolId: admin.poolId),
                let estimated = pool.userPool.estimatedNumberOfUsers
            else { return false }
            return total >= estimated
        case .users, .file: return false
        }
    }

    /// On a terminal the pool id is typed; without one, --yes (and for every user of the pool, --confirm-pool).
    private func confirm(poolId: String, _ chosen: UserSelection, everyUser: Bool, _ context: CommandContext) throws {
        if let confirmPool = options.confirmPool {
            guard confirmPool == poolId else {
                throw AuthctlError(
                    .usage,
                    "--confirm-pool \(UntrustedText(confirmPool)) is not this pool (\(poolId)): nothing was changed")
            }
            return
        }
        if options.yes && !everyUser { return }
        guard context.console.canPrompt else {
            throw AuthctlError(
                .usage,
                everyUser
                    ? "\(chosen == .allUsers ? "--all-users" : "this selection") --execute acts on every user of the pool: without a terminal, confirm with --confirm-pool \(poolId)"
                    : "--execute changes users' sessions and cannot be undone: pass --yes to confirm without a terminal"
            )
        }
        let typed = context.console.prompt("Type the pool id (\(poolId)) to go ahead: ", secret: false)?
            .trimmedBlanks()
        guard typed == poolId else {
            throw AuthctlError(.unexpected, "cancelled (the pool id was not typed); nothing was changed")
        }
    }
}

/// A bulk run's `--output json`: the plan (dry run) or the summary; contain adds its record and exposure.
struct OpsRunReport: CommandReport {
    var userPoolId: String
    var action: String
    var selection: String
    var dryRun: Bool
    var ratePerSecond: Double
    var checkpoint: String
    var auditLog: String
    @Nullable var selected: Int? = nil
    /// Dry run: the first ten usernames (as the service sent them).
    var firstUsers: [String] = []
    @Nullable var expectedSeconds: Double? = nil
    var done = 0
    var signedOut = 0
    var disabled = 0
    var notFound = 0
    var failed = 0
    var throttled = 0
    /// Seconds spent acting, over every run of this checkpoint.
    var elapsedSeconds: Double = 0
    /// Users a second in this run.
    var meanRate: Double = 0
    var resumed = false
    var complete = false
    /// contain: the incident record, its id, the steps and the first users' exposure.
    var record: String? = nil
    var incident: String? = nil
    var steps: [String]? = nil
    var exposure: [UserExposure]? = nil
    var textMessages: [String] = []

    enum CodingKeys: String, CodingKey {
        case userPoolId, action, selection, dryRun, ratePerSecond, checkpoint, auditLog, selected, firstUsers,
            expectedSeconds,
            done, signedOut, disabled, notFound, failed, throttled, elapsedSeconds, meanRate, resumed, complete,
            record, incident, steps, exposure
    }

    mutating func take(_ checkpoint: OpsCheckpoint) {
        let counts = checkpoint.counts
        (done, signedOut, disabled, notFound, failed) = (
            counts.done, counts.signedOut, counts.disabled, counts.notFound, counts.failed
        )
        elapsedSeconds = (checkpoint.elapsed * 1000).rounded() / 1000
        if selected == nil { selected = checkpoint.total }
    }
}

extension QuotaPace {
    /// The pace as a bulk run's plan says it.
    var description: String { "user updates at most \(BulkRunFlow.number(rate)) a second (\(origin))" }
}

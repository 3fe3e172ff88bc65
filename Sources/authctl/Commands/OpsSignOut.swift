import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `authctl ops signout`: sign out (and with --disable, disable) many users, paced to the
/// service's quota, resumable, with progress and an audit log. Dry run unless --execute.
struct OpsSignOut: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "signout",
        abstract: "Sign out (and --disable) a group, a filter, a list or every user of the pool, paced and resumable.",
        discussion: """
            Without --execute it only prints the plan: how many users, the first ten, the action, \
            the pace and the expected duration. With --execute it acts: AdminUserGlobalSignOut for \
            each user (then AdminDisableUser with --disable), at --rate calls a second, slowing down \
            when the service throttles. Progress goes to stderr, every user's outcome to the audit \
            log (JSON Lines), and after every user a checkpoint under $XDG_STATE_HOME/authctl/ops/: \
            running the same command again finishes only the rest (--restart starts over). \
            Exit codes: 0 every user done (not found counts as done), 3 stopped part-way (Ctrl-C): \
            run the same command again to resume, 4 done with some users failed (see the audit log; \
            the same command again retries them), \
            65 a users file that cannot be read, 69 Cognito unreachable (resumable), \
            77 AWS credentials refused (resumable), 78 no AWS credentials or no safe state directory.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: UserSelectionOptions

    @Flag(help: "Also disable each user (AdminDisableUser) after signing it out.")
    var disable = false

    @Flag(help: "Act (without it: print the plan and change nothing).")
    var execute = false

    @Flag(
        name: .shortAndLong,
        help:
            "Do not ask to type the pool id (required with --execute without a terminal; not enough for --all-users, see --confirm-pool)."
    )
    var yes = false

    @Option(
        help: ArgumentHelp(
            "The pool id, typed in advance: confirms --execute without a prompt, --all-users included.", valueName: "id"
        ))
    var confirmPool: String?

    @Option(
        help: ArgumentHelp(
            "User-update calls a second at most (the account's quota is 25 a second, shared with its other traffic).",
            valueName: "n"))
    var rate: Double = 20

    @Option(
        help: ArgumentHelp(
            "Listing calls (ListUsers, ListUsersInGroup) a second at most (the quota is 30).",
            valueName: "n"))
    var listingRate: Double = 25

    @Flag(help: "Ignore the checkpoint of an earlier run of the same selection and start over.")
    var restart = false

    @Option(help: ArgumentHelp("Append the audit record here (default: next to the checkpoint).", valueName: "path"))
    var auditLog: String?

    func validate() throws {
        for (name, value) in [("--rate", rate), ("--listing-rate", listingRate)] where !(value > 0 && value <= 1000) {
            throw ValidationError("\(name) must be a number of calls a second, more than 0 and at most 1000.")
        }
    }

    var action: OpsAction { disable ? .signOutAndDisable : .signOut }

    func execute(in context: CommandContext) throws {
        let settings = try context.settings
        let admin = try AdminService(settings: settings, context: context, bulk: true)
        let state = try OpsStateDirectory.open(environment: context.environment)
        let chosen = try userSelection(context, state)
        let run = try BulkRunLifecycle(
            context: context, admin: admin, state: state, action: action, selection: chosen,
            rate: rate, listingRate: listingRate)
        let standing = try run.standing(restart: restart, execute: execute)
        let earlier: OpsCheckpoint?
        switch standing {
        case .fresh: earlier = nil
        case .resumable(let checkpoint), .failedUsersToRetry(let checkpoint, _), .finished(let checkpoint):
            earlier = checkpoint
        }
        var report = OpsSignOutReport(
            userPoolId: admin.poolId, action: action.auditName, selection: chosen.description,
            dryRun: !execute, ratePerSecond: rate, checkpoint: state.checkpointPath(run.stem),
            auditLog: auditLog ?? earlier?.auditLog ?? state.auditPath(run.stem))

        switch standing {
        case .failedUsersToRetry(let earlier, let users):
            // A finished run with failed users: running it again tries those users again.
            return try retry(users, of: earlier, report: report, run: run, context: context)
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
        var text = planText(report, remaining: plan.remaining)
        if let earlier {
            report.take(earlier)
            report.resumed = true
            text.append(
                "Resuming: \(plan.alreadyDone) of \(Format.counted(plan.total, "user")) \(plan.alreadyDone == 1 ? "was" : "were") done by an earlier run (checkpoint \(report.checkpoint)); \(execute ? "finishing" : "--execute finishes") the remaining \(plan.remaining)."
            )
        }

        guard execute else {
            report.textMessages = text + ["Dry run: nothing was changed. Add --execute to do it."]
            return context.emit(report)
        }
        text.forEach(context.console.message)
        try confirm(
            poolId: admin.poolId, chosen, everyUser: Self.selectsEveryUser(chosen, total: plan.total, admin: admin),
            context)
        try conclude(
            report, try run.run(plan, resuming: earlier, auditLog: report.auditLog), admin: admin, context: context)
    }

    /// A finished run's failed users acted on again (`BulkRunLifecycle.retry`), after the same
    /// confirmation; the plan said first.
    private func retry(
        _ users: [String], of earlier: OpsCheckpoint, report: OpsSignOutReport, run: BulkRunLifecycle,
        context: CommandContext
    ) throws {
        var report = report
        report.take(earlier)
        report.resumed = true
        report.expectedSeconds = run.expectedSeconds(users: users.count, listing: false)
        let plural = users.count == 1 ? "user" : "users"
        let text = [
            "Retrying the \(users.count) \(plural) that failed in the run finished on \(Format.localTime(earlier.updatedAt)) (the audit log \(report.auditLog) names them): \(users.prefix(10).map { OutsideText($0).description }.joined(separator: ", "))\(users.count > 10 ? ", ..." : ""). --restart does every user again."
        ]
        guard execute else {
            report.textMessages = text + ["Dry run: nothing was changed. Add --execute to do it."]
            return context.emit(report)
        }
        text.forEach(context.console.message)
        try confirm(poolId: run.admin.poolId, run.selection, everyUser: run.selection == .allUsers, context)
        try conclude(
            report, try run.retry(users, of: earlier, auditLog: report.auditLog), admin: run.admin, context: context)
    }

    /// The summary (stderr, or the JSON report) and the exit code of a run that acted.
    private func conclude(
        _ report: OpsSignOutReport, _ outcome: BulkRunOutcome, admin: AdminService,
        context: CommandContext
    ) throws {
        let (checkpoint, total, throttled, stop) = (outcome.checkpoint, outcome.total, outcome.throttled, outcome.stop)
        var report = report
        report.meanRate = outcome.meanRate
        report.take(checkpoint)
        report.throttled = throttled
        report.complete = checkpoint.complete
        let summary =
            "\(checkpoint.counts.done) of \(Format.counted(total, "user")) done: \(checkpoint.counts.signedOut) signed out, \(checkpoint.counts.disabled) disabled, \(checkpoint.counts.notFound) not found, \(checkpoint.counts.failed) failed (\(throttled) throttling answers absorbed by slowing down). Audit log: \(report.auditLog)"
        switch stop {
        case nil:
            report.textMessages = [summary]
            context.emit(report)
            if checkpoint.counts.failed > 0 {
                throw AuthctlError(
                    .someFailed,
                    "\(Format.counted(checkpoint.counts.failed, "user")) failed: the audit log \(report.auditLog) says which, with the service's error code; run the same command again to retry them"
                )
            }
        case let interrupted as OpsInterrupted:
            report.textMessages = [summary]
            context.emit(report)
            throw AuthctlError(
                .partiallyDone,
                "interrupted (signal \(interrupted.signal)) after \(checkpoint.counts.done) of \(Format.counted(total, "user")); the checkpoint is written: run the same command again to finish the remaining \(max(0, total - checkpoint.counts.done))"
            )
        case let error?:
            report.textMessages = [summary]
            context.emit(report)
            let failure = AuthctlError.from(error, endpoint: admin.endpoint)
            throw AuthctlError(
                failure.code,
                "\(failure.message)\nStopped after \(checkpoint.counts.done) of \(Format.counted(total, "user")); the checkpoint is written: run the same command again to finish the rest."
            )
        }
    }

    /// The plan for people: what, how many, the first names (escaped), the pace and the duration.
    private func planText(_ report: OpsSignOutReport, remaining: Int) -> [String] {
        let verb = disable ? "Sign out and disable" : "Sign out"
        var text = [
            "\(verb) \(Format.counted(report.selected ?? 0, "user")) (\(selectionDescription)) of \(report.userPoolId), at most \(Self.number(rate)) calls a second (\(action.callsPerUser) per user): about \(OpsProgress.clockTime(report.expectedSeconds ?? 0)) for \(Format.counted(remaining, "user"))."
        ]
        if !report.firstUsers.isEmpty {
            let more = (report.selected ?? 0) > report.firstUsers.count ? ", ..." : ""
            text.append(
                (report.firstUsers.count == 1 ? "First user: " : "First users: ")
                    + report.firstUsers.map { OutsideText($0).description }.joined(separator: ", ") + more)
        }
        return text
    }

    private var selectionDescription: String {
        if !selection.users.isEmpty { return selection.users.count == 1 ? "--user" : "\(selection.users.count) --user" }
        if let file = selection.usersFile {
            return "--users-file \(file == "-" ? "(standard input)" : OutsideText(file).description)"
        }
        if let group = selection.group { return "group \(OutsideText(group))" }
        if let filter = selection.filter { return "filter \(OutsideText(filter))" }
        return "EVERY user of the pool"
    }

    static func number(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : Numbers.oneDecimal(value)
    }

    /// The selection, a users file's content digested (standard input first copied to the state
    /// directory, since it is read twice: counted, then acted on).
    private func userSelection(_ context: CommandContext, _ state: OpsStateDirectory) throws -> UserSelection {
        if !selection.users.isEmpty { return .users(selection.users) }
        if let group = selection.group { return .group(group) }
        if let filter = selection.filter { return .filter(filter) }
        if selection.allUsers { return .allUsers }
        guard let path = selection.usersFile else { return .allUsers }
        if path == "-" { return try state.keepStandardInput(context.console) }
        guard let file = ReadableFile(path: path) else {
            throw AuthctlError(.inputRejected, "cannot read the users file \(OutsideText(path))")
        }
        var digest = Digest.Hasher64()
        while let chunk = file.read(upTo: 1 << 16), !chunk.isEmpty { digest.add(chunk) }
        return .file(path: path, digest: digest.hex)
    }

    /// Whether the selection is the whole pool: --all-users, or a group or filter that selects as
    /// many users as the pool has (`username ^= ""` selects them all), which asks what --all-users
    /// asks (issue 31, finding 9). The pool's count is DescribeUserPool's; unknown: not the whole pool.
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
        if let confirmPool {
            guard confirmPool == poolId else {
                throw AuthctlError(
                    .usage,
                    "--confirm-pool \(OutsideText(confirmPool)) is not this pool (\(poolId)): nothing was changed")
            }
            return
        }
        if yes && !everyUser { return }
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

/// `ops signout --output json`: the plan (dry run) or the summary.
struct OpsSignOutReport: CommandReport {
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
    var textMessages: [String] = []

    enum CodingKeys: String, CodingKey {
        case userPoolId, action, selection, dryRun, ratePerSecond, checkpoint, auditLog, selected, firstUsers,
            expectedSeconds,
            done, signedOut, disabled, notFound, failed, throttled, elapsedSeconds, meanRate, resumed, complete
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

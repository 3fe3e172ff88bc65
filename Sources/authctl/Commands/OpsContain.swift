import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authctl ops contain`: a compromised account (or many) contained in one audited, resumable
/// run, with an incident record that states what stays exposed. `--client-id` alone: a
/// compromised app client's secret rotated (OpsContainClient).
struct OpsContain: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "contain",
        abstract:
            "Contain compromised users: evidence, MFA, devices, sessions, password, disable, sign-out; or rotate an app client's secret.",
        discussion: """
            Without --execute it prints the plan: each step, its calls, the pace and the expected \
            time. With --execute, for each user in this order (each step skippable, each safe to \
            repeat): snapshot (what `ops investigate` reads, written into the incident record before \
            anything changes); feedback (with --feedback-invalid / --feedback-invalid-since: \
            AdminUpdateAuthEventFeedback Invalid); mfa (AdminDeleteSoftwareToken, every MFA factor \
            off; --keep-mfa skips it); devices (AdminForgetDevice for each); sessions \
            (AdminRevokeUserSession, where the pool tracks sessions); password (AdminResetUserPassword, \
            a code to the verified email or phone, or with --temporary-password-stdin a temporary \
            password); disable (AdminDisableUser; --keep-enabled skips it); signout \
            (AdminUserGlobalSignOut, after disabling). The service refuses a password reset for a \
            disabled user, hence the order. Paced, checkpointed per user and step (a rerun does only \
            what is left), one audit line per step. The record (--record, default next to the \
            checkpoint, mode 0600) holds the snapshot, every step and each user's exposure: tokens \
            already issued pass offline checks until they expire, passkeys cannot be removed by an \
            administrator. With --client-id and no user: AddUserPoolClientSecret, a \
            client-credentials token with the new secret, DeleteUserPoolClientSecret for the old ones; \
            the new secret goes to the terminal once or to --secret-out. Exit codes as `ops signout`; \
            4 also when a step was not possible (no verified channel for the reset).
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: UserSelectionOptions
    @OptionGroup var run: BulkRunOptions
    @OptionGroup var events: EventBoundOptions

    @Flag(help: "Leave the user's MFA as it is (no AdminDeleteSoftwareToken, no AdminSetUserMFAPreference).")
    var keepMfa = false

    @Flag(help: "Leave the user enabled (no AdminDisableUser). A user with passkeys should stay disabled.")
    var keepEnabled = false

    @Option(
        name: .customLong("skip"),
        help: ArgumentHelp(
            "Skip a step (repeatable): feedback, mfa, devices, sessions, password, disable, signout.", valueName: "step"
        ))
    var skippedSteps: [ContainStep] = []

    @Flag(
        help:
            "Read a temporary password from standard input: AdminSetUserPassword Permanent=false instead of a reset code."
    )
    var temporaryPasswordStdin = false

    @Option(help: ArgumentHelp("Mark this sign-in event invalid (repeatable; with one --user).", valueName: "event-id"))
    var feedbackInvalid: [String] = []

    @Option(
        help: ArgumentHelp(
            "Mark every sign-in event since then invalid (ISO 8601 time or an age: 48h).", valueName: "time"))
    var feedbackInvalidSince: String?

    @Option(
        help: ArgumentHelp("The incident record (JSON Lines, 0600; default next to the checkpoint).", valueName: "path")
    )
    var record: String?

    @Option(
        help: ArgumentHelp(
            "--client-id rotation: write the new secret here (mode 0600) instead of the terminal.", valueName: "path"))
    var secretOut: String?

    var rotatesClient: Bool { selection.isEmpty && global.clientId != nil }

    func validate() throws {
        if rotatesClient { return }
        try selection.requireOne()
        if secretOut != nil { throw ValidationError("--secret-out goes with --client-id and no user selection.") }
        if skippedSteps.contains(.snapshot) {
            throw ValidationError("The snapshot cannot be skipped: it is the evidence, taken before anything changes.")
        }
        if temporaryPasswordStdin && selection.usersFile == "-" {
            throw ValidationError("--temporary-password-stdin and --users-file - both want standard input.")
        }
        if !feedbackInvalid.isEmpty && selection.users.count != 1 {
            throw ValidationError("--feedback-invalid names one user's events: give exactly one --user.")
        }
        if let feedbackInvalidSince, EventBoundOptions.time(feedbackInvalidSince, now: Date()) == nil {
            throw ValidationError("--feedback-invalid-since: give an ISO 8601 time or an age (48h, 7d).")
        }
    }

    /// A bulk run lasts as long as its users take at the quota's pace: `--timeout` bounds each
    /// request, and the ops engine retries.
    var timeoutScope: TimeoutScope { rotatesClient ? .wholeCommand : .eachRequest }

    func execute(in context: CommandContext) throws {
        let admin = try AdminService(context: context)
        let state = try OpsStateDirectory.open(environment: context.environment)
        if rotatesClient {
            return try OpsContainClient(options: run, secretOut: secretOut)
                .run(in: context, admin: admin, state: state, clientId: global.clientId ?? "")
        }
        var skipped = Set(skippedSteps)
        if keepMfa { skipped.insert(.mfa) }
        if keepEnabled { skipped.insert(.disable) }
        let request = ContainmentRequest(
            skipped: skipped,
            temporaryPassword: temporaryPasswordStdin
                ? try NewPasswordReader.read(
                    console: context.console, fromStdin: true,
                    stdinMissing: "--temporary-password-stdin: standard input held no password") : nil,
            invalidEvents: feedbackInvalid,
            invalidSince: feedbackInvalidSince.flatMap { EventBoundOptions.time($0, now: context.now()) },
            events: events.bounds(now: context.now()))
        let chosen = try selection.resolve(context, state)
        let flow = try containmentFlow(request, chosen, admin: admin, state: state, context: context)
        try flow.run(in: context, admin: admin, state: state, chosen: chosen)
    }

    private func containmentFlow(
        _ request: ContainmentRequest, _ chosen: UserSelection, admin: AdminService, state: OpsStateDirectory,
        context: CommandContext
    ) throws -> BulkRunFlow {
        let stem = OpsStateDirectory.stem(poolId: admin.poolId, action: .contain, selection: chosen)
        let recordPath = record ?? IncidentRecord.defaultPath(state, stem)
        let incident =
            IncidentRecord.incidentId(at: recordPath) ?? IncidentRecord.newId(poolId: admin.poolId, now: context.now())
        let investigator = Investigator(poolId: admin.poolId, bounds: request.events)
        let steps = request.steps
        var containment: Containment?
        func opened() throws -> Containment {
            if let containment { return containment }
            let made = Containment(
                request: request, investigator: investigator,
                record: try IncidentRecord(path: recordPath, id: incident),
                exposure: ExposureCalculator(), now: context.now)
            containment = made
            return made
        }
        let (updates, reads) = ContainStep.callEstimate(steps)
        var flow = BulkRunFlow(
            options: run, selection: selection, action: .contain, callsPerUser: (updates, reads),
            describe: { selected, remaining, pace, seconds in
                ([
                    "Contain \(Format.counted(selected, "user")) (\(selection.summary)) of \(admin.poolId), \(pace.description): about \(OpsProgress.clockTime(seconds)) for \(Format.counted(remaining, "user")). Steps, in order, for each user:"
                ]
                    + steps.map { "  \($0.rawValue): \($0.calls)" }
                    + ["Incident record: \(UntrustedText(recordPath)) (incident \(incident))."]).joined(separator: "\n")
            },
            summarize: { checkpoint, total, throttled in
                "\(checkpoint.counts.done) of \(Format.counted(total, "user")) contained or tried: \(checkpoint.counts.failed) with a step failed or not possible, \(checkpoint.counts.notFound) not found (\(throttled) throttling answers absorbed)."
            })
        // The record opens (and is checked) before the first change; a dry run writes nothing.
        flow.steps = try LazySteps(opened)
        flow.starting = { chosen in
            try opened().record.started(
                pool: admin.poolId, selection: chosen.description, steps: steps,
                who: .current(accessKeyId: admin.credentials.accessKeyId, environment: context.environment),
                at: context.now())
        }
        flow.finishing = { report in
            report.record = recordPath
            report.incident = incident
            report.steps = steps.map(\.rawValue)
            let shown = containment?.shownExposures ?? []
            report.exposure = shown
            for exposure in shown {
                report.textMessages.append("What stays exposed for \(UntrustedText(exposure.user)):")
                report.textMessages += exposure.summary.map { "  " + $0 }
            }
            report.textMessages.append(
                "Incident record: \(UntrustedText(recordPath)) (incident \(incident)); `authctl ops restore --user NAME` re-enables a user once the password is new."
            )
        }
        return flow
    }
}

/// The containment steps, made on first use: the dry run opens no record.
private final class LazySteps: UserSteps {
    private let make: () throws -> Containment
    init(_ make: @escaping () throws -> Containment) throws { self.make = make }

    func perform(
        _ username: String, using service: CognitoService, done: Set<String>, operation: BulkOperation,
        finished: (StepOutcome) throws -> Void
    ) throws -> OpsResult {
        try make().perform(username, using: service, done: done, operation: operation, finished: finished)
    }
}

extension ContainStep: ExpressibleByArgument {}

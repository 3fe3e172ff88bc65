import ArgumentParser
import AuthctlCore
import CognitoClient

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
            A sign-out is not containment: the password still signs in; see `authctl ops contain`. \
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

    @OptionGroup var run: BulkRunOptions

    func validate() throws { try selection.requireOne() }

    var action: OpsAction { disable ? .signOutAndDisable : .signOut }

    /// A bulk run lasts as long as its users take at the quota's pace: `--timeout` bounds each
    /// request, and the ops engine retries.
    var timeoutScope: TimeoutScope { .eachRequest }

    func execute(in context: CommandContext) throws {
        let admin = try AdminService(context: context)
        let state = try OpsStateDirectory.open(environment: context.environment)
        let (verb, action, selectionWords) = (
            disable ? "Sign out and disable" : "Sign out", action, selectionDescription
        )
        let flow = BulkRunFlow(
            options: run, selection: selection, action: action,
            describe: { selected, remaining, pace, seconds in
                "\(verb) \(Format.counted(selected, "user")) (\(selectionWords)) of \(admin.poolId), at most \(BulkRunFlow.number(pace.rate)) calls a second (\(action.callsPerUser) per user; \(pace.origin)): about \(OpsProgress.clockTime(seconds)) for \(Format.counted(remaining, "user"))."
            },
            summarize: { checkpoint, total, throttled in
                "\(checkpoint.counts.done) of \(Format.counted(total, "user")) done: \(checkpoint.counts.signedOut) signed out, \(checkpoint.counts.disabled) disabled, \(checkpoint.counts.notFound) not found, \(checkpoint.counts.failed) failed (\(throttled) throttling answers absorbed by slowing down)."
            })
        try flow.run(in: context, admin: admin, state: state)
    }

    private var selectionDescription: String { selection.summary }
}

import ArgumentParser
import AuthctlCore

/// What every bulk ops command that changes users takes (ops signout, ops contain): acting or
/// planning, the confirmation, the pace, the checkpoint and the audit log.
struct BulkRunOptions: ParsableArguments {
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
            "User-update calls a second at most (default: 80% of the account's provisioned UserUpdate limit from GetProvisionedLimit, else 20 of the default 25).",
            valueName: "n"))
    var rate: Double?

    @Option(
        help: ArgumentHelp(
            "Listing calls (ListUsers, ListUsersInGroup) a second at most (default: 80% of the UserList limit, else 25 of 30).",
            valueName: "n"))
    var listingRate: Double?

    @Flag(help: "Ignore the checkpoint of an earlier run of the same selection and start over.")
    var restart = false

    @Option(help: ArgumentHelp("Append the audit record here (default: next to the checkpoint).", valueName: "path"))
    var auditLog: String?

    func validate() throws {
        for (name, value) in [("--rate", rate), ("--listing-rate", listingRate)] {
            if let value, !(value > 0 && value <= 1000) {
                throw ValidationError("\(name) must be a number of calls a second, more than 0 and at most 1000.")
            }
        }
    }
}

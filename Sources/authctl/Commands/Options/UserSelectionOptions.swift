import ArgumentParser
import AuthctlCore

/// Which users an ops command acts on: exactly one selection.
struct UserSelectionOptions: ParsableArguments {
    @Option(name: .customLong("user"), help: ArgumentHelp("A user (repeatable).", valueName: "username"))
    var users: [String] = []

    @Option(
        help: ArgumentHelp(
            "A file of usernames, one a line (- for standard input); blank lines and # comments are skipped.",
            valueName: "path"))
    var usersFile: String?

    @Option(help: ArgumentHelp("The members of this group (ListUsersInGroup).", valueName: "name"))
    var group: String?

    @Option(
        help: ArgumentHelp(
            "The users ListUsers' filter matches, e.g. 'email ^= \"contractor\"'.", valueName: "expression"))
    var filter: String?

    @Flag(help: "Every user of the pool (executing asks for the pool id to be typed).")
    var allUsers = false

    func validate() throws {
        let given = [!users.isEmpty, usersFile != nil, group != nil, filter != nil, allUsers].filter { $0 }.count
        guard given == 1 else {
            throw ValidationError(
                given == 0
                    ? "Say which users: --user NAME (repeatable), --users-file PATH, --group NAME, --filter EXPRESSION or --all-users."
                    : "Give exactly one of --user, --users-file, --group, --filter, --all-users.")
        }
        if users.contains(where: { $0.isEmpty }) || usersFile == "" || group == "" || filter == "" {
            throw ValidationError("An empty username, file, group or filter selects nobody.")
        }
    }
}

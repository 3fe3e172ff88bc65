import ArgumentParser
import AuthctlCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

    /// At most one selection here; the commands that need one say so (`requireOne`): `ops contain
    /// --client-id` takes none.
    func validate() throws {
        guard given <= 1 else {
            throw ValidationError("Give exactly one of --user, --users-file, --group, --filter, --all-users.")
        }
        if users.contains(where: { $0.isEmpty }) || usersFile == "" || group == "" || filter == "" {
            throw ValidationError("An empty username, file, group or filter selects nobody.")
        }
    }

    private var given: Int {
        [!users.isEmpty, usersFile != nil, group != nil, filter != nil, allUsers].filter { $0 }.count
    }

    var isEmpty: Bool { given == 0 }

    func requireOne() throws {
        guard given == 1 else {
            throw ValidationError(
                "Say which users: --user NAME (repeatable), --users-file PATH, --group NAME, --filter EXPRESSION or --all-users."
            )
        }
    }
}

extension UserSelectionOptions {
    /// Which selection was given, for the plan (names escaped).
    var summary: String {
        if !users.isEmpty { return users.count == 1 ? "--user" : "\(users.count) --user" }
        if let usersFile {
            return "--users-file \(usersFile == "-" ? "(standard input)" : UntrustedText(usersFile).description)"
        }
        if let group { return "group \(UntrustedText(group))" }
        if let filter { return "filter \(UntrustedText(filter))" }
        return "EVERY user of the pool"
    }

    /// The selection, a users file's content digested (standard input first copied to the state
    /// directory, since it is read twice: counted, then acted on).
    func resolve(_ context: CommandContext, _ state: OpsStateDirectory) throws -> UserSelection {
        if !users.isEmpty { return .users(users) }
        if let group = group { return .group(group) }
        if let filter = filter { return .filter(filter) }
        if allUsers { return .allUsers }
        guard let path = usersFile else { return .allUsers }
        if path == "-" { return try state.keepStandardInput(context.console) }
        guard let file = ReadableFile(path: path) else {
            throw AuthctlError(.inputRejected, "cannot read the users file \(UntrustedText(path))")
        }
        var digest = Digest.Hasher64()
        while let chunk = file.read(upTo: 1 << 16), !chunk.isEmpty { digest.add(chunk) }
        return .file(path: path, digest: digest.hex)
    }

}

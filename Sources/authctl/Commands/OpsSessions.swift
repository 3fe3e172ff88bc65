import ArgumentParser
import AuthctlCore
import CognitoClient

/// `authctl ops sessions`: single sessions of any user (IAM-signed admin operations).
struct OpsSessions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "End single sessions of any user of the pool (AWS credentials, SigV4; audited).",
        subcommands: [OpsSessionsRevoke.self])
}

/// `ops sessions revoke --user NAME ID...`.
struct OpsSessionsRevoke: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "End sessions of a user by id (AdminRevokeUserSession), each recorded in the ops audit log.",
        discussion: """
            The ids are those `ops investigate` or AdminListUserSessions list. Each session's \
            refresh token stops working and Cognito refuses its access tokens; tokens already issued \
            keep passing offline JWT checks until they expire. Every outcome is appended to the audit \
            log (JSON Lines, next to the ops checkpoints unless --audit-log says where) before the next \
            session. Exit codes: 0 every session ended or already gone, 4 some refused, 64 usage \
            (a malformed id, no terminal and no --yes), 77 AWS credentials refused, 78 no AWS credentials.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The user whose sessions to end.", valueName: "username"))
    var user: String

    @Argument(help: ArgumentHelp("Session ids (tkn... or sso...).", valueName: "id"))
    var ids: [String] = []

    @Flag(
        help:
            "Also end each session's linked sessions (a token session's SSO session, an SSO session's token sessions).")
    var withLinked = false

    @Flag(name: .shortAndLong, help: "Do not ask for confirmation (required without a terminal).")
    var yes = false

    @Option(
        help: ArgumentHelp("Append the audit record here (default: next to the ops checkpoints).", valueName: "path"))
    var auditLog: String?

    func validate() throws {
        if ids.isEmpty { throw ValidationError("give the id of each session to end.") }
        if let bad = ids.first(where: { !SessionID.isValid($0) }) {
            throw ValidationError(
                "\(UntrustedText(bad)) is not a session id: ids are tkn or sso and 25 lowercase letters or digits.")
        }
    }

    func execute(in context: CommandContext) throws {
        let unique = ids.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        try AdminSessionRevoke(
            settings: try context.settings, username: user, ids: unique, linked: withLinked, confirmed: yes,
            auditLog: auditLog
        ).run(in: context)
    }
}

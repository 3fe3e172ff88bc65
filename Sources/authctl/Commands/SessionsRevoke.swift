import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

/// `sessions revoke ID...`: RevokeUserSession for each, never this device's own session.
struct SessionsRevoke: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: "End one or more of the signed-in user's sessions by id (from `authctl sessions`).",
        discussion: """
            RevokeUserSession for each id: its refresh token stops working and Cognito refuses its \
            access tokens; tokens already issued keep passing offline JWT checks until they expire. \
            Each session's result is said: ended, already gone, or refused with Cognito's reason \
            (exit 4 when any was refused). This device's own session cannot be ended this way: \
            use `authctl signout`. Asks first on a terminal; --yes without one.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("Session ids, as `authctl sessions` lists them (tkn... or sso...).", valueName: "id"))
    var ids: [String] = []

    @Flag(
        help:
            "Also end each session's linked sessions: a token session's managed-login (SSO) session, an SSO session's token sessions."
    )
    var withLinked = false

    @Flag(name: .shortAndLong, help: "Do not ask for confirmation (required without a terminal).")
    var yes = false

    func validate() throws {
        if ids.isEmpty { throw ValidationError("give the id of each session to end (see `authctl sessions`).") }
        if let bad = ids.first(where: { !SessionID.isValid($0) }) {
            throw ValidationError(
                "\(UntrustedText(bad)) is not a session id: ids are tkn or sso and 25 lowercase letters or digits, as `authctl sessions` lists them."
            )
        }
    }

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        let owner = UserSessions(context: context, sessions: sessions)
        let (session, listing) = try owner.list()
        guard case .tracked(let found) = listing else {
            throw AuthctlError(.configuration, UserSessions.trackingOffMessage(pool: session.userPoolId))
        }
        if let current = found.first(where: { $0.isCurrentSession == true })?.validId, ids.contains(current) {
            throw AuthctlError(
                .usage,
                "\(current) is this device's own session: end it with `authctl signout` (or every session with `authctl signout --global`); nothing was ended."
            )
        }
        let unique = ids.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        try Confirmation.require(
            "End \(unique.count == 1 ? "session \(unique[0])" : "\(unique.count) sessions") of \(session.username)? [y/N] ",
            confirmed: yes, console: context.console, withoutTerminal: "this ends sessions and cannot be undone")
        let results = try owner.revoke(unique, linked: withLinked)
        let report = SessionRevokeReport(
            user: session.username, userPoolId: session.userPoolId, results: results,
            lifetime: session.tokenLifetime, now: context.now())
        context.emit(report)
        if let failure = report.failure { throw failure }
    }
}

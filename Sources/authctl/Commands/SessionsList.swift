import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

/// `sessions list`: ListUserSessions with the stored session.
struct SessionsList: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract:
            "List the signed-in user's sessions across the pool's app clients, newest activity first (* this one).",
        discussion: """
            Token sessions (one per sign-in, a refresh token's) and managed-login (SSO) sessions, \
            with the app client, device, last IP address, city and country, created and last active \
            in local time. A pool without session tracking (off by default; Essentials tier or \
            higher) lists nothing: one line says so and how an administrator turns it on, exit 0.
            """)

    @OptionGroup var global: GlobalOptions

    func execute(in context: CommandContext) throws {
        let settings = try context.settings
        let (session, listing) = try UserSessions(context: context, sessions: try context.profileSession).list()
        switch listing {
        case .trackingOff:
            context.emit(
                SessionListReport(user: session.username, userPoolId: session.userPoolId, tracking: false, sessions: [])
            )
        case .tracked(let found):
            let clientId = settings.clientId ?? session.clientId
            context.emit(
                SessionListReport(
                    user: session.username, userPoolId: session.userPoolId, tracking: true,
                    sessions: found.map { SessionSummary($0, profileClientId: clientId) }))
        }
    }
}

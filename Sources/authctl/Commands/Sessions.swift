import ArgumentParser
import AuthctlCore

/// `authctl sessions`: where the signed-in user is signed in (the pool's session tracking).
struct Sessions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions",
        abstract: "List where the signed-in user is signed in, or end single sessions (the pool's session tracking).",
        subcommands: [SessionsList.self, SessionsRevoke.self],
        defaultSubcommand: SessionsList.self)
}

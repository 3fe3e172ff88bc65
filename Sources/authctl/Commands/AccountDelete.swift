import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct AccountDelete: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete the signed-in user's account for good (DeleteUser), then what this profile keeps of it.",
        discussion: """
            On a terminal, asks to type the username; without one, --yes is required. Afterwards the \
            session, its cached AWS credentials and this machine's remembered device of the account are \
            removed; the app client's secret and machine tokens stay.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(name: .shortAndLong, help: "Do not ask (required without a terminal).")
    var yes = false

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        let stored = try sessions.signedIn()
        let console = context.console
        if !yes {
            guard console.canPrompt else {
                throw AuthctlError(
                    .usage, "deleting the account cannot be undone: pass --yes to confirm without a terminal")
            }
            console.message(
                "This deletes the account \(UntrustedText(stored.username)) in \(stored.userPoolId) for good: it cannot be undone."
            )
            let typed = console.prompt("Type the username to confirm: ", secret: false)?.trimmedBlanks()
            guard typed == stored.username else { throw AuthctlError(.unexpected, Messages.cancelled) }
        }
        let deleted = try AccountSettings.write(sessions) { session, service in
            try service.deleteUser(accessToken: session.accessToken)
            return session
        }
        var report = AccountDeletedReport(username: deleted.username, userPoolId: deleted.userPoolId, removed: [])
        do {
            report.removed = try sessions.removeDeletedAccount(deleted).map(\.rawValue)
        } catch {
            let failure = AuthctlError.from(error)
            throw AuthctlError(
                failure.code,
                "The account was deleted, but what this profile keeps of it could not be removed: \(failure.message); run: authctl signout"
            )
        }
        context.emit(report)
    }
}

/// `account delete --output json`.
struct AccountDeletedReport: CommandReport {
    var deleted = true
    var username: String
    var userPoolId: String
    /// The kinds of kept item removed (session, device).
    var removed: [String]

    var textMessages: [String] {
        ["Deleted the account \(UntrustedText(username)) from \(userPoolId); this profile no longer keeps its session."]
    }
}

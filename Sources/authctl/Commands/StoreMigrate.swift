import ArgumentParser
import AuthctlCore
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `store migrate --to X`: moves the profile's items to X and records X.
struct StoreMigrate: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Move every item of the profile to another store, and record that store in the profile.",
        discussion: """
            Copies each item, reads it back, records the new store in the profile, then deletes the \
            old items. Interrupted, run it again: it finishes the job. The remembered device of the \
            signed-in user is copied and also left in the old store (other profiles may use it).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The store to move to: secret-service, kernel-keyring or file.", valueName: "store"))
    var to: StoreKind

    func execute(in context: CommandContext) throws {
        let profile = Defaults.profileName(option: global.profile, environment: context.environment)
        let profileStore = context.profileStore(profile)
        let session = try? context.profileSession.stored()
        let user = (session ?? nil).map { (userPoolId: $0.userPoolId, username: $0.username) }
        let outcome = try profileStore.migrate(to: to, deviceOf: user)
        let report = StoreMigrateReport(
            profile: profile, from: outcome.from?.rawValue, to: to.rawValue, moved: outcome.moved,
            resumed: outcome.resumed, problems: outcome.removalFailures)
        context.emit(report)
        if !outcome.removalFailures.isEmpty { throw AuthctlError.reported(.unexpected) }
    }
}

struct StoreMigrateReport: CommandReport {
    var profile: String
    @Nullable var from: String?
    var to: String
    var moved: [String]
    var resumed: Bool
    var problems: [String]

    var textMessages: [String] {
        var lines: [String] = []
        if resumed {
            lines.append(
                "Finished the interrupted move of profile \(profile) from \(from ?? "?") to \(to): its old items were removed."
            )
        } else if let from {
            let what = moved.isEmpty ? "no items" : moved.joined(separator: ", ")
            lines.append("Moved profile \(profile) from \(from) to \(to) (\(what)); \(to) is recorded in its config.")
        } else {
            lines.append("Profile \(profile) already uses \(to); recorded in its config.")
        }
        for problem in problems {
            lines.append(
                "authctl: could not remove an old item (\(problem)); run `authctl store migrate --to \(to)` again")
        }
        return lines
    }
}

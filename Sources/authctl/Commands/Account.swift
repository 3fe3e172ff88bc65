import ArgumentParser
import AuthctlCore

/// `authctl account`: the signed-in user's own account settings.
struct Account: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "account",
        abstract: "Change, verify and delete the signed-in user's attributes, or delete the account.",
        subcommands: [AccountUpdate.self, AccountVerify.self, AccountDeleteAttribute.self, AccountDelete.self])
}

import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct AccountDeleteAttribute: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-attribute",
        abstract: "Delete one of the signed-in user's attributes (DeleteUserAttributes).",
        discussion:
            "Deleting the email or phone number asks first (--yes without a terminal): codes can no longer be sent there."
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The attribute's name, e.g. nickname or custom:team.")
    var name: String

    @Flag(
        name: .shortAndLong, help: "Do not ask before deleting an email or phone number (required without a terminal).")
    var yes = false

    func validate() throws {
        if name.isEmpty || name == "sub" || name.hasSuffix("_verified") {
            throw ValidationError("\(UntrustedText(name)) cannot be deleted by the user.")
        }
    }

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        let stored = try sessions.signedIn()
        if let address = VerifiableAttribute(rawValue: name) {
            try Confirmation.require(
                "Delete the \(address.words) of \(UntrustedText(stored.username))? Codes (password reset) can no longer be sent there. [y/N] ",
                confirmed: yes, console: context.console,
                withoutTerminal: "deleting the \(address.words) stops codes being sent there")
        }
        try AccountSettings.write(sessions) { session, service in
            try service.deleteUserAttributes(accessToken: session.accessToken, names: [name])
        }
        context.emit(AttributeDeletedReport(deleted: name))
    }
}

/// `account delete-attribute --output json`.
struct AttributeDeletedReport: CommandReport {
    var deleted: String
    var textMessages: [String] { ["Deleted the attribute \(UntrustedText(deleted))."] }
}

import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Asks before something that cannot be undone; without a terminal, `--yes` is required.
package enum Confirmation {
    package static func require(
        _ question: String, confirmed: Bool, console: Console,
        withoutTerminal reason: String = "this signs out every device and cannot be undone"
    ) throws {
        if confirmed { return }
        guard console.canPrompt else {
            throw AuthctlError(.usage, "\(reason): pass --yes to confirm without a terminal")
        }
        let answer = console.prompt(question, secret: false)?.trimmedBlanks().lowercased()
        guard answer == "y" || answer == "yes" else {
            throw AuthctlError(.unexpected, "cancelled; nothing was changed")
        }
    }
}

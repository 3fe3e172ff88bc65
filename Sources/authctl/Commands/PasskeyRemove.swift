import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `passkey remove ID`: DeleteWebAuthnCredential (asks first on a terminal; `--yes` without).
struct PasskeyRemove: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove one of the signed-in user's passkeys (the key keeps it, but Cognito no longer accepts it).")

    @OptionGroup var global: GlobalOptions

    @Argument(help: ArgumentHelp("The passkey's credential id (see `authctl passkey list`).", valueName: "id"))
    var credentialId: String

    @Flag(name: .shortAndLong, help: "Do not ask for confirmation (required without a terminal).")
    var yes = false

    func validate() throws {
        if credentialId.isEmpty || credentialId.count > 1024
            || credentialId.contains(where: { $0.isWhitespace || $0.isNewline })
        {
            throw ValidationError("ID must be a credential id as `authctl passkey list` shows it.")
        }
    }

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        try Confirmation.require(
            "Remove passkey \(credentialId)? It can no longer sign in. [y/N] ", confirmed: yes,
            console: context.console, withoutTerminal: "this removes a passkey")
        let session = try sessions.withFreshSession { session, service -> StoredSession in
            do {
                try service.deleteWebAuthnCredential(accessToken: session.accessToken, credentialId: credentialId)
            } catch let error as CognitoError where error.refusal == .resourceNotFound {
                throw AuthctlError(
                    .inputRejected,
                    "\(session.username) has no passkey \(UntrustedText(credentialId)) (see `authctl passkey list`): \(UntrustedText(error.message))"
                )
            }
            return session
        }
        context.emit(
            PasskeyRemoveReport(user: session.username, userPoolId: session.userPoolId, credentialId: credentialId))
    }
}

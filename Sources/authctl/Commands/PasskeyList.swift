import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `passkey list`: ListWebAuthnCredentials (every page) with the stored session.
struct PasskeyList: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the signed-in user's passkeys: id, name, relying party, attachment, transports, created.")

    @OptionGroup var global: GlobalOptions

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        let (session, credentials) = try sessions.withFreshSession { session, service in
            (session, try service.listWebAuthnCredentials(accessToken: session.accessToken))
        }
        context.emit(
            PasskeyListReport(
                user: session.username, userPoolId: session.userPoolId,
                passkeys: credentials.map(PasskeySummary.init)))
    }
}

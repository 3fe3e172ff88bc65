import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authctl passkey`: the signed-in user's passkeys (WebAuthn credentials) in the user pool.
struct Passkey: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passkey",
        abstract: "Add a passkey on a FIDO2 security key, or list or remove the signed-in user's passkeys.",
        subcommands: [PasskeyAdd.self, PasskeyList.self, PasskeyRemove.self])
}

/// One passkey in `passkey list --output json`: the service's description, its text as sent.
struct PasskeySummary: Encodable {
    var credentialId: String
    @Nullable var name: String?
    @Nullable var relyingPartyId: String?
    @Nullable var attachment: String?
    var transports: [String]
    @Nullable var createdAt: Date?
}

extension PasskeySummary {
    init(_ credential: WebAuthnCredentialDescription) {
        self.init(
            credentialId: credential.credentialId, name: credential.friendlyCredentialName,
            relyingPartyId: credential.relyingPartyId, attachment: credential.authenticatorAttachment,
            transports: credential.authenticatorTransports ?? [],
            createdAt: credential.createdAt.map { Date(timeIntervalSince1970: $0) })
    }

    /// One line for people; the service's text escaped.
    var textLine: String {
        let created = createdAt.map(Format.localTime) ?? "unknown"
        let transports = self.transports.isEmpty ? "-" : self.transports.joined(separator: ",")
        return
            "\(UntrustedText(credentialId))  \(UntrustedText(name ?? "(no name)"))  \(UntrustedText(relyingPartyId ?? "-"))  "
            + "\(UntrustedText(attachment ?? "-"))  \(UntrustedText(transports))  created \(created)"
    }
}

/// `passkey list --output json`.
struct PasskeyListReport: CommandReport {
    var user: String
    var userPoolId: String
    var passkeys: [PasskeySummary]

    var textOutput: [String] { passkeys.isEmpty ? [] : [passkeys.map(\.textLine).joined(separator: "\n")] }
    var textMessages: [String] {
        passkeys.isEmpty
            ? ["\(UntrustedText(user)) has no passkeys in \(userPoolId); add one with `authctl passkey add`."] : []
    }
}

/// `passkey add --output json`.
struct PasskeyAddReport: CommandReport {
    var user: String
    var userPoolId: String
    var credentialId: String
    var relyingPartyId: String
    /// The service's description of the new passkey, when it lists it.
    @Nullable var name: String?

    var textMessages: [String] {
        let named = name.map { " (\(UntrustedText($0)))" } ?? ""
        return [
            "Added passkey \(UntrustedText(credentialId))\(named) for \(UntrustedText(user)) at \(UntrustedText(relyingPartyId)); sign in with `authctl signin --method passkey`."
        ]
    }
}

/// `passkey remove --output json`.
struct PasskeyRemoveReport: CommandReport {
    var user: String
    var userPoolId: String
    var credentialId: String

    var textMessages: [String] { ["Removed passkey \(UntrustedText(credentialId)) of \(UntrustedText(user))."] }
}

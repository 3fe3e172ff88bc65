import ArgumentParser
import AuthctlCore

/// `authctl mfa`: a signed-in user's second factors.
struct MFA: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mfa",
        abstract: "Manage the signed-in user's multi-factor authentication.",
        subcommands: [MFASetup.self, MFAStatus.self, MFAEnable.self, MFADisable.self])
}

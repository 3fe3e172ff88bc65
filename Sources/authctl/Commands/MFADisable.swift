import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct MFADisable: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable",
        abstract: "Turn a second factor off (totp or passkey), after a confirmation.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The factor to turn off: totp (the authenticator app) or passkey (passkey MFA).")
    var factor: MFAFactor

    @Flag(name: .shortAndLong, help: "Do not ask for confirmation (required without a terminal).")
    var yes = false

    func validate() throws {
        if factor != .totp && factor != .passkey {
            throw ValidationError("only totp and passkey can be turned off by authctl for now")
        }
    }

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        let settings = try context.settings
        let (stored, user) = try MFAFactor.account(of: sessions)
        if factor == .passkey {
            let on = user.enabledFactors.contains(.webAuthn)
            if on {
                try Confirmation.require(
                    "Turn off passkey MFA for \(stored.username)? [y/N] ", confirmed: yes, console: context.console,
                    withoutTerminal: "turning off a second factor weakens the account")
                try sessions.withFreshSession { session, service in
                    try service.setUserMFAPreference(accessToken: session.accessToken, passkey: false)
                }
            }
            try PasskeyMFARecord.set(false, settings: settings)
            context.emit(PasskeyMFAReport(enabled: false, changed: on, username: stored.username))
            return
        }
        guard user.enabledFactors.contains(MFAType.totp.challengeName) else {
            context.emit(MFADisableResult(changed: false, username: stored.username))
            return
        }
        try Confirmation.require(
            "Turn off the authenticator app for \(stored.username)? [y/N] ", confirmed: yes,
            console: context.console, withoutTerminal: "turning off a second factor weakens the account")
        try sessions.withFreshSession { session, service in
            try service.setUserMFAPreference(
                accessToken: session.accessToken, softwareToken: MFASetting(enabled: false, preferred: false))
        }
        context.emit(MFADisableResult(changed: true, username: stored.username))
    }
}

/// `mfa disable totp --output json`: `changed` is false when it was not on.
struct MFADisableResult: CommandReport {
    var totp = "disabled"
    var changed: Bool
    /// For the text only.
    var username: String

    enum CodingKeys: String, CodingKey { case totp, changed }

    var textMessages: [String] {
        [
            changed
                ? "Authenticator app turned off for \(username)."
                : "The authenticator app was not on for \(username); nothing was changed."
        ]
    }
}

import ArgumentParser
import CognitoClient
import Foundation

struct MFADisable: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "disable",
        abstract: "Turn a second factor off (only totp for now), after a confirmation.")

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The factor to turn off: totp.")
    var factor: MFAType

    @Flag(name: .shortAndLong, help: "Do not ask for confirmation (required without a terminal).")
    var yes = false

    func validate() throws {
        if factor != .totp { throw ValidationError("only totp can be turned off by authctl for now") }
    }

    func run(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        let keeper = SessionKeeper(context: context, settings: settings)
        guard let stored = try keeper.repository.load(profile: settings.profile) else {
            throw AuthctlError.notSignedIn(profile: settings.profile)
        }
        let user = try keeper.withFreshSession { session, service in try service.getUser(accessToken: session.accessToken) }
        guard (user.userMFASettingList ?? []).contains(factor.challengeName.rawValue) else {
            switch global.output {
            case .json: context.printJSON(MFADisableResult(totp: "disabled", changed: false))
            case .text: context.console.message("The authenticator app was not on for \(stored.username); nothing was changed.")
            }
            return
        }
        try Confirmation.require("Turn off the authenticator app for \(stored.username)? [y/N] ", confirmed: yes,
                                 console: context.console, withoutTerminal: "turning off a second factor weakens the account")
        try keeper.withFreshSession { session, service in
            try service.setUserMFAPreference(accessToken: session.accessToken, softwareToken: MFASetting(enabled: false, preferred: false))
        }
        switch global.output {
        case .json: context.printJSON(MFADisableResult(totp: "disabled", changed: true))
        case .text: context.console.message("Authenticator app turned off for \(stored.username).")
        }
    }
}

/// `mfa disable totp --output json`: `changed` is false when it was not on.
struct MFADisableResult: Encodable {
    var totp: String
    var changed: Bool
}

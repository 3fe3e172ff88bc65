import ArgumentParser
import CognitoClient
import Foundation

struct MFAStatus: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show which second factors are enabled and which is preferred (asks Cognito).")

    @OptionGroup var global: GlobalOptions

    func run(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        let keeper = SessionKeeper(context: context, settings: settings)
        let user = try keeper.withFreshSession { session, service in try service.getUser(accessToken: session.accessToken) }
        var enabled = Set(user.userMFASettingList ?? [])
        // Legacy SMS settings (MFAOptions) count as SMS enabled.
        if user.mfaOptions?.contains(where: { $0.deliveryMedium == "SMS" }) == true { enabled.insert(ChallengeName.smsMFA.rawValue) }
        let report = MFAReport(
            username: user.username,
            enabled: enabled.compactMap(MFAType.from(challengeName:)).map(\.rawValue).sorted(),
            preferred: user.preferredMfaSetting.flatMap(MFAType.from(challengeName:))?.rawValue)
        switch global.output {
        case .json:
            context.printJSON(report)
        case .text:
            let enabledText = report.enabled.isEmpty ? "none" : report.enabled.joined(separator: ", ")
            context.console.output("user:       \(OutsideText(report.username))\nenabled:    \(enabledText)\npreferred:  \(report.preferred ?? "none")")
        }
    }
}

/// `mfa status --output json`: factor names are totp, sms and email.
struct MFAReport: Encodable {
    var username: String
    var enabled: [String]
    var preferred: String?

    enum CodingKeys: String, CodingKey { case username, enabled, preferred }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(username, forKey: .username)
        try container.encode(enabled, forKey: .enabled)
        try container.encode(preferred, forKey: .preferred)
    }
}

import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct MFAStatus: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract:
            "Show which second factors are enabled (totp, sms, email, passkey MFA) and which is preferred (asks Cognito)."
    )

    @OptionGroup var global: GlobalOptions

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        let user = try sessions.withFreshSession { session, service in
            try service.getUser(accessToken: session.accessToken)
        }
        var enabled = Set(user.enabledFactors)
        // Legacy SMS settings (MFAOptions) count as SMS enabled.
        if user.mfaOptions?.contains(where: { $0.deliveryMedium == "SMS" }) == true { enabled.insert(.smsMFA) }
        // Passkey MFA (WebAuthnMfaSettings) is listed as WEB_AUTHN: "passkey".
        let passkey = enabled.contains(.webAuthn) ? [MFAFactor.passkey.rawValue] : []
        let report = MFAReport(
            username: user.username,
            enabled: (enabled.compactMap(MFAType.init(challengeName:)).map(\.rawValue) + passkey).sorted(),
            preferred: user.preferredFactor.flatMap(MFAType.init(challengeName:))?.rawValue)
        context.emit(report)
    }
}

/// `mfa status --output json`: factor names are totp, sms, email and passkey (passkey MFA).
struct MFAReport: CommandReport {
    var username: String
    var enabled: [String]
    @Nullable var preferred: String?

    var textOutput: [String] {
        let enabledText = enabled.isEmpty ? "none" : enabled.joined(separator: ", ")
        return [
            "user:       \(UntrustedText(username))\nenabled:    \(enabledText)\npreferred:  \(preferred ?? "none")"
        ]
    }
}

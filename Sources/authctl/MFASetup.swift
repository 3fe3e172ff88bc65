import ArgumentParser
import CognitoClient
import Foundation

struct MFASetup: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Set up an authenticator app (TOTP) and make it the preferred second factor.",
        discussion: "Shows the secret, its otpauth:// URI and a QR code, then asks for the app's first code.")

    @OptionGroup var global: GlobalOptions

    func run(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        guard context.console.isInteractive else {
            throw AuthctlError(.usage, "mfa setup needs a terminal to show the QR code and ask for the first code")
        }
        let keeper = SessionKeeper(context: context, settings: settings)
        try keeper.withFreshSession(minValidity: 120) { session, service in
            let association = try service.associateSoftwareToken(accessToken: session.accessToken)
            let uri = AuthenticatorEnrolment.uri(secret: association.secretCode, username: session.username, issuer: session.userPoolId)
            try AuthenticatorEnrolment.show(secret: association.secretCode, uri: uri, context: context)
            _ = try AuthenticatorEnrolment.verify(context: context) { code in
                try service.verifySoftwareToken(accessToken: session.accessToken, code: code, friendlyName: ChallengeResponder.friendlyName)
            }
            try service.setUserMFAPreference(accessToken: session.accessToken, softwareToken: MFASetting(enabled: true, preferred: true))
        }
        switch global.output {
        case .json:
            context.printJSON(["totp": "enabled", "preferred": "SOFTWARE_TOKEN_MFA"])
        case .text:
            context.console.message("Authenticator app set up and preferred; the next sign-in will ask for its code.")
        }
    }
}

import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct MFASetup: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "setup",
        abstract: "Set up an authenticator app (TOTP) and make it the preferred second factor.",
        discussion: """
            Shows the secret, its otpauth:// URI and a QR code, then asks for the app's first code. \
            When an authenticator app is already set up, asks before replacing it (--yes replaces it \
            without asking). Taking long to scan does not matter: the session is refreshed before each call.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(name: .shortAndLong, help: "Replace an authenticator app that is already set up without asking.")
    var yes = false

    func execute(in context: CommandContext) throws {
        let console = context.console
        guard console.canPrompt else {
            throw AuthctlError(.usage, "mfa setup needs a terminal to show the QR code and ask for the first code")
        }
        let sessions = try context.profileSession
        // Each call below runs on its own fresh session (a person may take minutes to scan), and
        // only that call is repeated when the service refuses the access token as expired: the
        // secret is associated, and shown, once.
        let user = try sessions.withFreshSession { session, service in
            (try service.getUser(accessToken: session.accessToken), session.userPoolId)
        }
        let attributes = Dictionary(
            user.0.userAttributes.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
        let label = AuthenticatorURI.label(username: user.0.username, attributes: attributes)
        if user.0.enabledFactors.contains(MFAType.totp.challengeName) {
            try Confirmation.require(
                "An authenticator app is already set up for \(label). Replace it (the old one stops working)? [y/N] ",
                confirmed: yes, console: console, withoutTerminal: "replacing the authenticator app")
        }

        let association = try sessions.withFreshSession { session, service in
            try service.associateSoftwareToken(accessToken: session.accessToken)
        }
        let uri = AuthenticatorURI.otpauth(secret: association.secretCode, username: label, issuer: user.1)
        try AuthenticatorEnrolment.show(secret: association.secretCode, uri: uri, context: context)
        _ = try AuthenticatorEnrolment.verify(context: context) { code in
            try sessions.withFreshSession { session, service in
                do {
                    return try service.verifySoftwareToken(
                        accessToken: session.accessToken, code: code,
                        friendlyName: AuthenticatorEnrolment.friendlyName)
                } catch let error as CognitoError where error.refusal == .codeMismatch {
                    throw CodeDidNotMatch()
                }
            }
        }
        try sessions.withFreshSession { session, service in
            try service.setUserMFAPreference(
                accessToken: session.accessToken, softwareToken: MFASetting(enabled: true, preferred: true))
        }
        context.emit(MFASetupReport())
    }
}

/// `mfa setup --output json`, in the vocabulary of `mfa status`: totp, sms, email.
struct MFASetupReport: CommandReport {
    var totp = "enabled"
    var preferred = MFAType.totp.rawValue

    var textMessages: [String] { ["Authenticator app set up and preferred; the next sign-in will ask for its code."] }
}

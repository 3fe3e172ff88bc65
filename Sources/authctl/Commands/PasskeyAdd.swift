import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `passkey add`: StartWebAuthnRegistration, makeCredential on the security key,
/// CompleteWebAuthnRegistration with the whole RegistrationResponseJSON.
struct PasskeyAdd: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract:
            "Register a passkey on a FIDO2 security key for the signed-in user (touch, and the key's PIN where asked).",
        discussion: """
            Cognito names the passkey itself (its API takes no name). The key must be attached \
            (or named with --fido-device); afterwards sign in with `authctl signin --method passkey`. \
            The relying party is never taken from the service's answer: it is the profile's passkey_rp_id, \
            else its managed-login domain's host, else --rp-id (recorded).
            """)

    @OptionGroup var global: GlobalOptions

    @OptionGroup(title: "Security key")
    var securityKey: SecurityKeyOptions

    @Option(
        help: ArgumentHelp(
            "The relying party (host name) the pool's passkeys are for: its WebAuthnConfiguration's RelyingPartyId, by default the managed-login domain. Needed once on a profile with neither passkey_rp_id nor a managed-login domain; recorded as passkey_rp_id.",
            valueName: "host"))
    var rpId: String?

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        let settings = try context.settings
        // Everything that can be known here is, before the first request: the relying party, the
        // session, libfido2 and the key.
        _ = try sessions.signedIn()
        let pin = try RelyingPartyPin.forRegistration(settings: settings, named: rpId)
        let key = SecurityKeyUse(
            choice: securityKey.choice(environment: context.environment), console: context.console,
            environment: context.environment, relyingParty: pin)
        let device = try key.device()
        let report = try sessions.withFreshSession { session, service -> PasskeyAddReport in
            let document = try service.startWebAuthnRegistration(accessToken: session.accessToken)
            guard let options = WebAuthnCreationOptions.from(document) else {
                throw AuthctlError(
                    .unavailable, "Cognito's CredentialCreationOptions are not WebAuthn creation options")
            }
            let registration = try key.register(options, device: device)
            try service.completeWebAuthnRegistration(accessToken: session.accessToken, credential: registration.json)
            let id = Base64URL.encode(registration.credentialId)
            // The service's name for it, when it lists it (a listing that fails does not undo the registration).
            let listed = (try? service.listWebAuthnCredentials(accessToken: session.accessToken))?.first {
                $0.credentialId == id
            }
            return PasskeyAddReport(
                user: session.username, userPoolId: session.userPoolId, credentialId: id,
                relyingPartyId: options.rpId ?? "", name: listed?.friendlyCredentialName)
        }
        if pin.recordsOnSuccess {
            // Named with --rp-id: the only relying party this profile's key signs for from now on.
            try ConfigFile.update(path: settings.configFile) { file in
                file.profiles[settings.profile, default: ProfileConfig()].passkeyRpId = report.relyingPartyId
            }
            context.console.message(
                "Profile \(settings.profile)'s passkeys are for \(report.relyingPartyId) (passkey_rp_id in \(settings.configFile)): the security key is asked to sign for no other relying party."
            )
        }
        context.emit(report)
    }
}

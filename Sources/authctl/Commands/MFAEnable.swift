import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `mfa enable passkey`: passkey MFA (SetUserMFAPreference WebAuthnMfaSettings): a passkey
/// sign-in with user verification then satisfies MFA. The authenticator app is turned on by
/// `mfa setup`, which enrols it.
struct MFAEnable: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "enable",
        abstract: "Turn passkey MFA on: a passkey sign-in with the key's PIN (user verification) counts as MFA.",
        discussion: """
            The pool's passkeys must count as MFA (WebAuthnConfiguration FactorConfiguration \
            MULTI_FACTOR_WITH_USER_VERIFICATION), and another second factor must be on (`authctl mfa setup`), \
            so the account is not locked out with its key. From then on this profile's passkey sign-ins always ask \
            the security key to verify you (its PIN or built-in verification), and a key that cannot is refused.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The factor to turn on: passkey (the authenticator app is set up with `authctl mfa setup`).")
    var factor: MFAFactor

    func validate() throws {
        if factor != .passkey {
            throw ValidationError("only passkey is turned on with `mfa enable`; set up totp with `authctl mfa setup`")
        }
    }

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        let settings = try context.settings
        let (stored, user) = try MFAFactor.account(of: sessions)
        // Cognito asks for another factor so a lost key locks nobody out; said here, before the change.
        guard user.enabledFactors.contains(where: { $0 != .webAuthn }) else {
            throw AuthctlError(
                .configuration,
                "passkey MFA needs another second factor on for \(UntrustedText(stored.username)) (so a lost key locks nobody out): set up the authenticator app with `authctl mfa setup` first"
            )
        }
        if !user.enabledFactors.contains(.webAuthn) {
            let policy = SessionPolicy(otherRefusal: { (error: CognitoError, _: CognitoService) -> Error in
                guard error.refusal == .invalidParameter || error.refusal == .operationNotEnabled else { return error }
                return AuthctlError(
                    .configuration,
                    "Cognito refused passkey MFA for \(UntrustedText(stored.username)): \(UntrustedText(error.message)). The pool's passkeys must count as MFA (WebAuthnConfiguration FactorConfiguration MULTI_FACTOR_WITH_USER_VERIFICATION, Essentials tier or above): ask its administrator"
                )
            })
            try sessions.withFreshSession(policy: policy) { session, service in
                try service.setUserMFAPreference(accessToken: session.accessToken, passkey: true)
            }.get()
        }
        try PasskeyMFARecord.set(true, settings: settings)
        context.emit(
            PasskeyMFAReport(
                enabled: true, changed: !user.enabledFactors.contains(.webAuthn), username: stored.username))
    }
}

/// The factors `mfa enable` and `mfa disable` name.
enum MFAFactor: String, CaseIterable, ExpressibleByArgument {
    case totp, sms, email, passkey

    /// The signed-in user, and their factors as Cognito has them (GetUser), before a switch.
    static func account(of sessions: ProfileSession) throws -> (StoredSession, GetUserResponse) {
        let stored = try sessions.signedIn()
        let user = try sessions.withFreshSession { session, service in
            try service.getUser(accessToken: session.accessToken)
        }
        return (stored, user)
    }
}

/// The profile's own record of passkey MFA (`passkey_mfa`), which makes its passkey sign-ins ask
/// the key for user verification whatever the service's options say.
enum PasskeyMFARecord {
    static func set(_ on: Bool, settings: Settings) throws {
        guard settings.passkeyMFA != on else { return }
        try ConfigFile.update(path: settings.configFile) { file in
            file.profiles[settings.profile, default: ProfileConfig()].passkeyMFA = on ? "true" : nil
        }
    }
}

/// `mfa enable passkey` / `mfa disable passkey --output json`, as `mfa disable totp`'s: `changed`
/// is false when it already was so.
struct PasskeyMFAReport: CommandReport {
    var passkey: String
    var changed: Bool
    /// For the text only.
    var username: String

    init(enabled: Bool, changed: Bool, username: String) {
        passkey = enabled ? "enabled" : "disabled"
        self.changed = changed
        self.username = username
    }

    enum CodingKeys: String, CodingKey { case passkey, changed }

    var textMessages: [String] {
        let name = UntrustedText(username)
        switch (passkey == "enabled", changed) {
        case (true, true):
            return [
                "Passkey MFA turned on for \(name): a passkey sign-in with the key's PIN (user verification) now counts as MFA."
            ]
        case (true, false): return ["Passkey MFA was already on for \(name); nothing was changed at Cognito."]
        case (false, true): return ["Passkey MFA turned off for \(name)."]
        case (false, false): return ["Passkey MFA was not on for \(name); nothing was changed at Cognito."]
        }
    }
}

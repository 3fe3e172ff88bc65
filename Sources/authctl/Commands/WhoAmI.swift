import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct WhoAmI: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "whoami",
        abstract: "Show the signed-in user, asking Cognito (GetUser) so a revoked session is noticed.",
        discussion: "Refreshes the access token first when it expires within 60 seconds.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Also check the tokens' RS256 signatures against the pool's published keys (JWKS).")
    var verify = false

    @Flag(
        help:
            "Also show the user's sign-in factors (GetUserAuthFactors): preferred MFA, configured MFA and first factors."
    )
    var factors = false

    func execute(in context: CommandContext) throws {
        try Self.showIdentity(verify: verify, factors: factors, in: context)
    }

    /// The work of both front doors (this command and `FastPath`, which takes `whoami` without
    /// `--verify` and `--factors`).
    static func showIdentity(verify: Bool, factors: Bool, in context: CommandContext) throws {
        let sessions = try context.profileSession
        let checks = TokenChecks(session: sessions)
        let (session, user) = try sessions.withFreshSession { session, service in
            try checks.checkClaims(session, .access)
            if verify {
                try checks.checkClaims(session, .id)
                try checks.verifySignature(session, .access, service: service)
                try checks.verifySignature(session, .id, service: service)
            }
            return (session, try service.getUser(accessToken: session.accessToken))
        }
        let authFactors =
            try factors
            ? sessions.withFreshSession { session, service in
                AuthFactors(try service.getUserAuthFactors(accessToken: session.accessToken))
            } : nil

        let claims = try? JWTClaims(token: session.accessToken)
        var attributes: [String: String] = [:]
        for attribute in user.userAttributes {
            attributes[attribute.name] = attribute.value ?? ""
        }
        let identity = Identity(
            username: user.username,
            sub: attributes["sub"] ?? session.sub,
            email: attributes["email"],
            attributes: attributes,
            unverified: AccountSettings.unverified(attributes),
            groups: claims?.groups ?? [],
            profile: session.profile,
            userPoolId: session.userPoolId,
            clientId: session.clientId,
            accessTokenExpiresAt: session.accessTokenExpiresAt,
            factors: authFactors)

        context.emit(identity)
    }
}

/// `whoami --output json`.
struct Identity: CommandReport {
    var username: String
    var sub: String
    // Always present, null when the user has no email, so the shape is stable.
    @Nullable var email: String?
    var attributes: [String: String]
    /// Email or phone number not verified yet (pending: `authctl account verify`).
    var unverified: [String]
    var groups: [String]
    var profile: String
    var userPoolId: String
    var clientId: String
    var accessTokenExpiresAt: Date
    /// With --factors only (the key is left out otherwise).
    var factors: AuthFactors?

    private func pending(_ name: String) -> String {
        unverified.contains(name) ? " (pending verification: authctl account verify \(name))" : ""
    }

    var textOutput: [String] {
        var lines = [
            "username:      \(UntrustedText(username))",
            "sub:           \(UntrustedText(sub))",
        ]
        if let email { lines.append("email:         \(UntrustedText(email))\(pending("email"))") }
        lines.append(
            "groups:        \(groups.isEmpty ? "(none)" : groups.map { UntrustedText($0).description }.joined(separator: ", "))"
        )
        lines.append("profile:       \(profile)")
        lines.append("user pool:     \(userPoolId)")
        lines.append("access token:  valid until \(Format.localTime(accessTokenExpiresAt))")
        let others = attributes.keys.filter { $0 != "sub" && $0 != "email" }.sorted()
        if !others.isEmpty {
            lines.append("attributes:")
            for name in others {
                lines.append("  \(UntrustedText(name)): \(UntrustedText(attributes[name] ?? ""))\(pending(name))")
            }
        }
        if let factors { lines += factors.lines }
        return [lines.joined(separator: "\n")]
    }
}

/// `whoami --factors`: GetUserAuthFactors in words.
struct AuthFactors: Encodable {
    /// The auth factors the service documents as MFA-only (SOFTWARE_TOKEN, from the July 2026
    /// model): listed with the MFA factors, never as a way to sign in.
    static let mfaOnly: Set<String> = ["SOFTWARE_TOKEN"]

    @Nullable var preferredMfa: String?
    var configuredMfa: [String]
    /// PASSWORD, EMAIL_OTP, SMS_OTP, WEB_AUTHN.
    var firstFactors: [String]
    /// The configured auth factors that only answer MFA (SOFTWARE_TOKEN).
    var mfaOnlyFactors: [String]

    init(_ answer: GetUserAuthFactorsResponse) {
        preferredMfa = answer.preferredMfaSetting
        configuredMfa = answer.userMFASettingList ?? []
        let configured = answer.configuredUserAuthFactors ?? []
        firstFactors = configured.filter { !Self.mfaOnly.contains($0) }
        mfaOnlyFactors = configured.filter { Self.mfaOnly.contains($0) }
    }

    /// A factor's name (the service's challenge names) in words; an unknown one as it came, escaped.
    static func words(_ factor: String) -> String {
        switch ChallengeName(factor) {
        case .softwareTokenMFA, "SOFTWARE_TOKEN": return "authenticator app"
        case .smsMFA, .smsOTP: return "text message code"
        case .emailOTP: return "email code"
        case .password: return "password"
        case .webAuthn: return "passkey"
        default: return UntrustedText(factor).description
        }
    }

    var lines: [String] {
        func list(_ factors: [String]) -> String {
            factors.isEmpty ? "(none)" : factors.map(Self.words).joined(separator: ", ")
        }
        // The MFA-only auth factors join the MFA list (once: SOFTWARE_TOKEN is SOFTWARE_TOKEN_MFA's).
        var mfa = configuredMfa
        for factor in mfaOnlyFactors where !mfa.map(Self.words).contains(Self.words(factor)) { mfa.append(factor) }
        return [
            "preferred MFA: \(preferredMfa.map(Self.words) ?? "(none)")",
            "MFA factors:   \(list(mfa))",
            "sign in with:  \(list(firstFactors))",
        ]
    }
}

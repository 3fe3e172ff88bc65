import ArgumentParser
import CognitoClient
import Foundation

struct WhoAmI: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "whoami",
        abstract: "Show the signed-in user, asking Cognito (GetUser) so a revoked session is noticed.",
        discussion: "Refreshes the access token first when it expires within 60 seconds.")

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Also check the tokens' RS256 signatures against the pool's published keys (JWKS).")
    var verify = false

    func execute(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        let sessions = ProfileSession(context: context, settings: settings)
        let checks = TokenChecks(context: context, settings: settings)
        let (session, user) = try sessions.withFreshSession { session, service in
            try checks.checkClaims(session, .access)
            if verify {
                try checks.checkClaims(session, .id)
                try checks.verifySignature(session, .access, service: service)
                try checks.verifySignature(session, .id, service: service)
            }
            return (session, try service.getUser(accessToken: session.accessToken))
        }

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
            groups: claims?.groups ?? [],
            profile: session.profile,
            userPoolId: session.userPoolId,
            clientId: session.clientId,
            accessTokenExpiresAt: session.accessTokenExpiresAt)

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
    var groups: [String]
    var profile: String
    var userPoolId: String
    var clientId: String
    var accessTokenExpiresAt: Date

    var textOutput: [String] {
        var lines = [
            "username:      \(OutsideText(username))",
            "sub:           \(OutsideText(sub))",
        ]
        if let email { lines.append("email:         \(OutsideText(email))") }
        lines.append("groups:        \(groups.isEmpty ? "(none)" : groups.map { OutsideText($0).description }.joined(separator: ", "))")
        lines.append("profile:       \(profile)")
        lines.append("user pool:     \(userPoolId)")
        lines.append("access token:  valid until \(Format.localTime(accessTokenExpiresAt))")
        let others = attributes.keys.filter { $0 != "sub" && $0 != "email" }.sorted()
        if !others.isEmpty {
            lines.append("attributes:")
            for name in others { lines.append("  \(OutsideText(name)): \(OutsideText(attributes[name] ?? ""))") }
        }
        return [lines.joined(separator: "\n")]
    }
}

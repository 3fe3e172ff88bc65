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

    func run(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        let keeper = SessionKeeper(context: context, settings: settings)
        let checks = TokenChecks(context: context, settings: settings)
        let (session, user) = try keeper.withFreshSession { session, service in
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

        switch global.output {
        case .json:
            context.printJSON(identity)
        case .text:
            var lines = [
                "username:      \(OutsideText(identity.username))",
                "sub:           \(OutsideText(identity.sub))",
            ]
            if let email = identity.email { lines.append("email:         \(OutsideText(email))") }
            let groups = identity.groups.isEmpty ? "(none)" : identity.groups.map { OutsideText($0).description }.joined(separator: ", ")
            lines.append("groups:        \(groups)")
            lines.append("profile:       \(identity.profile)")
            lines.append("user pool:     \(identity.userPoolId)")
            lines.append("access token:  valid until \(Format.localTime(identity.accessTokenExpiresAt))")
            let others = attributes.keys.filter { $0 != "sub" && $0 != "email" }.sorted()
            if !others.isEmpty {
                lines.append("attributes:")
                for name in others { lines.append("  \(OutsideText(name)): \(OutsideText(attributes[name] ?? ""))") }
            }
            context.console.output(lines.joined(separator: "\n"))
        }
    }
}

/// `whoami --output json`.
struct Identity: Encodable {
    var username: String
    var sub: String
    var email: String?
    var attributes: [String: String]
    var groups: [String]
    var profile: String
    var userPoolId: String
    var clientId: String
    var accessTokenExpiresAt: Date

    enum CodingKeys: String, CodingKey {
        case username, sub, email, attributes, groups, profile, userPoolId, clientId, accessTokenExpiresAt
    }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(username, forKey: .username)
        try container.encode(sub, forKey: .sub)
        // Always present, null when the user has no email, so the shape is stable.
        try container.encode(email, forKey: .email)
        try container.encode(attributes, forKey: .attributes)
        try container.encode(groups, forKey: .groups)
        try container.encode(profile, forKey: .profile)
        try container.encode(userPoolId, forKey: .userPoolId)
        try container.encode(clientId, forKey: .clientId)
        try container.encode(accessTokenExpiresAt, forKey: .accessTokenExpiresAt)
    }
}

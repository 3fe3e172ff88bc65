import CognitoClient

/// Which identity pool to ask, where, and for which role.
package struct IdentityPoolSettings: Equatable {
    package var identityPoolId: String
    package var region: String
    /// AWS_ENDPOINT_URL_COGNITO_IDENTITY, else AWS_ENDPOINT_URL, else the region's public endpoint.
    package var endpoint: String
    package var roleArn: String?
    /// The Logins key, when set (`loginsKey(userPoolId:)` checks it and gives the default).
    package var providerName: String?

    package static let endpointOrigin = "(from AWS_ENDPOINT_URL_COGNITO_IDENTITY or AWS_ENDPOINT_URL)"

    /// `--identity-pool-id`, `--role-arn` and `--provider-name` as given, over the settings.
    package init(
        identityPoolId givenPoolId: String?, roleArn givenRoleArn: String?, providerName givenProviderName: String?,
        settings: Settings, environment env: [String: String]
    ) throws {
        let origin =
            "--identity-pool-id, AUTHCTL_IDENTITY_POOL_ID or identity_pool_id in [profiles.\(settings.profile)] of \(settings.configFile)"
        guard let poolId = givenPoolId.flatMap({ $0.isEmpty ? nil : $0 }) ?? settings.identityPoolId else {
            throw AuthctlError(
                .configuration,
                "\(settings.unknownProfileNote)no identity pool id for profile \(settings.profile): set \(origin)")
        }
        identityPoolId = try Self.checked(poolId, origin: origin)
        region = CognitoIdentityService.region(ofIdentityPool: poolId) ?? "us-east-1"
        endpoint = try Self.endpoint(environment: env, userPoolEndpoint: settings.endpoint, region: region)
        try ClientSettings.checkEndpoint(endpoint, origin: Self.endpointOrigin)
        roleArn = givenRoleArn
        providerName = givenProviderName.flatMap { $0.isEmpty ? nil : $0 } ?? settings.identityProviderName
    }

    /// Where a session's id token may go: AWS_ENDPOINT_URL_COGNITO_IDENTITY (said for this service
    /// alone), else the region's public endpoint. A generic AWS_ENDPOINT_URL (often set for other
    /// tools) is taken only when the user pool is reached there too (one emulator for both); one
    /// that names somewhere else is refused rather than handed the id token.
    package static func endpoint(environment env: [String: String], userPoolEndpoint: String?, region: String) throws
        -> String
    {
        if let specific = env["AWS_ENDPOINT_URL_COGNITO_IDENTITY"], !specific.isEmpty { return specific }
        guard let generic = env["AWS_ENDPOINT_URL"], !generic.isEmpty else {
            return CognitoIdentityService.defaultEndpoint(region: region)
        }
        guard let userPoolEndpoint, ClientSettings.sameEndpoint(generic, userPoolEndpoint) else {
            throw AuthctlError(
                .configuration,
                """
                AWS_ENDPOINT_URL (\(UntrustedText(generic))) is not where the user pool is reached \
                (\(userPoolEndpoint.map { UntrustedText($0).description } ?? "the region's default")): the session's id token is not \
                sent there. Say where Cognito Identity is with AWS_ENDPOINT_URL_COGNITO_IDENTITY
                """)
        }
        return generic
    }

    /// The Logins key for a session of `userPoolId`: the configured provider name, which must be
    /// one of the pool's two issuers without `https://`, else the original one.
    package func loginsKey(userPoolId: String) throws -> String {
        guard let providerName else { return CognitoIdentityService.providerName(userPoolId: userPoolId) }
        let region = Settings.region(fromPoolId: userPoolId) ?? ""
        let names = CognitoIssuer.accepted(region: region, userPoolId: userPoolId).map {
            String($0.dropFirst("https://".count))
        }
        guard names.contains(providerName) else {
            throw AuthctlError(
                .configuration,
                "the provider name \(UntrustedText(providerName)) (--provider-name, AUTHCTL_IDENTITY_PROVIDER_NAME or identity_provider_name) is not one of the user pool's: \(names.joined(separator: " or "))"
            )
        }
        return providerName
    }

    /// A well-formed `<region>:<uuid>`, or exit 78 naming where it came from.
    package static func checked(_ poolId: String, origin: String) throws -> String {
        guard CognitoIdentityService.isValidIdentityPoolId(poolId) else {
            throw AuthctlError(
                .configuration,
                """
                identity pool id "\(poolId)" is malformed: expected <region>:<uuid>, e.g. \
                eu-west-1:0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0 (from \(origin))
                """)
        }
        return poolId
    }
}

import ArgumentParser
import AuthctlCore

/// The identity pool options `aws-credentials` and `exec --aws` share.
struct IdentityPoolOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Identity pool id, <region>:<uuid> (env AUTHCTL_IDENTITY_POOL_ID, profile identity_pool_id).",
            valueName: "id"))
    var identityPoolId: String?

    @Option(
        help: ArgumentHelp(
            "Role to ask for (CustomRoleArn), where the identity pool lets the user choose among the roles of its rules.",
            valueName: "arn"))
    var roleArn: String?

    @Option(
        help: ArgumentHelp(
            "The identity pool's provider name for the user pool, the Logins key (env AUTHCTL_IDENTITY_PROVIDER_NAME, profile identity_provider_name; default: cognito-idp.<region>.amazonaws.com/<pool id>; issuer-cognito-idp.<primary region>.amazonaws.com/<pool id> for an identity pool that names the updated issuer).",
            valueName: "name"))
    var providerName: String?

    func validate() throws {
        if let roleArn, !IdentityPoolChoice.isRoleARN(roleArn) {
            throw ValidationError("--role-arn must be an IAM role ARN, e.g. arn:aws:iam::123456789012:role/reader")
        }
    }
}

/// The identity pool options as plain values (what both front doors of `aws-credentials` parse).
struct IdentityPoolChoice: Equatable {
    var identityPoolId: String?
    var roleArn: String?
    var providerName: String?

    /// `--role-arn`'s shape, checked before any request.
    static func isRoleARN(_ value: String) -> Bool { value.hasPrefix("arn:") && (20...2048).contains(value.count) }
}

extension IdentityPoolOptions {
    var choice: IdentityPoolChoice {
        IdentityPoolChoice(identityPoolId: identityPoolId, roleArn: roleArn, providerName: providerName)
    }
}

extension IdentityPoolSettings {
    init(_ options: IdentityPoolOptions, settings: Settings, environment: [String: String]) throws {
        try self.init(
            identityPoolId: options.identityPoolId, roleArn: options.roleArn, providerName: options.providerName,
            settings: settings, environment: environment)
    }
}

import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

enum AWSCredentialsFormat: String, ExpressibleByArgument, CaseIterable {
    /// The AWS CLI's and SDKs' `credential_process` JSON.
    case process
    /// `export AWS_ACCESS_KEY_ID=...` lines for `eval`.
    case env
}

struct AWSCredentialsCommand: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "aws-credentials",
        abstract: "Print temporary AWS credentials from a Cognito identity pool, for credential_process.",
        discussion: """
            In ~/.aws/config: credential_process = authctl aws-credentials --profile NAME. The session's id \
            token (refreshed first when needed) is exchanged for the credentials of the identity pool's \
            authenticated role (GetId, then GetCredentialsForIdentity). Stdout carries the credentials and \
            nothing else; messages go to stderr. They are cached in the profile's store until 5 minutes before \
            they expire, and parallel calls fetch once.
            """)

    @OptionGroup var global: GlobalOptions

    @OptionGroup var identityPool: IdentityPoolOptions

    @Option(help: "process: the credential_process JSON; env: export lines for eval.")
    var format: AWSCredentialsFormat = .process

    func validate() throws {
        if global.output == .json && format == .env {
            throw ValidationError(
                "--format env prints shell lines: --output json does not apply (the process format is JSON).")
        }
    }

    func execute(in context: CommandContext) throws {
        try Self.printCredentials(identityPool.choice, format: format, in: context)
    }

    /// The work both front doors run (`FastPath`).
    static func printCredentials(_ choice: IdentityPoolChoice, format: AWSCredentialsFormat, in context: CommandContext)
        throws
    {
        let settings = try context.settings
        let pool = try IdentityPoolSettings(
            identityPoolId: choice.identityPoolId, roleArn: choice.roleArn, providerName: choice.providerName,
            settings: settings, environment: context.environment)
        let credentials = try IdentityPoolCredentials(session: try context.profileSession, pool: pool).credentials()
        context.emit(AWSCredentialsOutput(credentials: credentials, format: format))
    }

    /// `{"Version":1,"AccessKeyId":…,"SecretAccessKey":…,"SessionToken":…,"Expiration":…}` in this order.
    static func processJSON(_ credentials: TemporaryAWSCredentials) -> String {
        let fields: [(String, String)] = [
            ("AccessKeyId", credentials.accessKeyId), ("SecretAccessKey", credentials.secretAccessKey),
            ("SessionToken", credentials.sessionToken), ("Expiration", Format.iso8601(credentials.expiration)),
        ]
        return "{\"Version\":1," + fields.map { "\(Format.json($0.0)):\(Format.json($0.1))" }.joined(separator: ",")
            + "}"
    }
}

/// What the AWS CLI (credential_process) or a shell (`eval`) reads: never encoded as a report.
struct AWSCredentialsOutput: CommandReport {
    var credentials: TemporaryAWSCredentials
    var format: AWSCredentialsFormat

    func encode(to encoder: Encoder) throws {}

    var document: String? {
        switch format {
        case .process:
            return AWSCredentialsCommand.processJSON(credentials)
        case .env:
            return credentials.environment.map { "export \($0.name)=\(ShellWord.exactlyQuoted($0.value))" }.joined(
                separator: "\n")
        }
    }
}

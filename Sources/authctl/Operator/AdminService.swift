import CognitoClient
import Foundation

/// The operator's connection for IAM-authorised (admin) operations: the pool from the settings,
/// AWS credentials from the environment or the shared credentials file, every request signed
/// with SigV4. Needs no stored session.
struct AdminService {
    let service: CognitoService
    let poolId: String
    let region: String
    let endpoint: String
    let credentials: AWSCredentials
    /// Where the credentials came from, for the audit line.
    let source: String

    /// `bulk`: each request bounded by `--timeout` (not the whole run), and no retries in the
    /// service: the ops engine paces and retries itself (BulkOperation.paced).
    init(settings: Settings, context: CommandContext, bulk: Bool = false) throws {
        poolId = try settings.checkedPoolId()
        region = Defaults.region(configured: settings.region, poolId: poolId)
        endpoint = Defaults.endpoint(configured: settings.endpoint, region: region)
        try ClientSettings.checkEndpoint(endpoint)
        (credentials, source) = try AWSCredentialChain.resolve(environment: context.environment)
        service = CognitoService(endpoint: endpoint, transport: try context.transport(settings, perRequest: bulk),
                                 retryPolicy: bulk ? .none : context.retryPolicy)
        let signer = SigV4Signer(credentials: credentials, region: region)
        let now = context.now
        service.requestSigner = { request in try signer.sign(&request, date: now()) }
    }

    /// A refusal the operator can act on: no such user, or AWS credentials refused; nil otherwise.
    static func refusal(_ error: CognitoError, username: String, poolId: String) -> AuthctlError? {
        guard !error.isThrottling && !error.isServerError else { return nil }
        // For a signed admin operation NotAuthorizedException too means the IAM identity may not do it.
        switch error.refusal {
        case .userNotFound?:
            return AuthctlError(.inputRejected, "no user \(username) in \(poolId): \(OutsideText(error.message))")
        case .awsCredentialsRefused?:
            break
        case _ where error.isNotAuthorized:
            break
        default:
            return nil
        }
        return AuthctlError(.notAuthorized, "the service refused the AWS credentials: \(OutsideText(error.errorType ?? "")): \(OutsideText(error.message))")
    }
}

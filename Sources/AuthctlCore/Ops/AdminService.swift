import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The operator's connection for IAM-authorised (admin) operations: the pool from the settings,
/// AWS credentials from the environment or the shared credentials file, every request signed
/// with SigV4. Needs no stored session.
package struct AdminService {
    package let service: CognitoService
    package let poolId: String
    package let region: String
    package let endpoint: String
    package let credentials: AWSCredentials
    /// Where the credentials came from, for the audit line.
    package let source: String

    /// A bulk run's command bounds each request by `--timeout` (not the whole run) and retries
    /// nothing in the service: the ops engine paces and retries itself (BulkOperation.paced;
    /// `CommandContext.timeoutScope`).
    package init(context: CommandContext) throws {
        let settings = try context.settings
        poolId = try settings.checkedPoolId()
        region = try Settings.checkedRegion(
            Defaults.region(configured: settings.region, poolId: poolId),
            origin: "--region, AUTHCTL_REGION, the profile's region, AWS_REGION or AWS_DEFAULT_REGION")
        endpoint = Defaults.endpoint(configured: settings.endpoint, region: region)
        try ClientSettings.checkEndpoint(endpoint)
        (credentials, source) = try AWSCredentialChain.resolve(environment: context.environment)
        service = CognitoService(
            endpoint: endpoint, transport: try context.transport(), retryPolicy: try context.retryPolicy)
        service.requestSigner = Self.signer(credentials, region, context.now)
    }

    private static func signer(_ credentials: AWSCredentials, _ region: String, _ now: @escaping () -> Date) -> (
        inout HTTPRequest
    ) throws -> Void {
        let signer = SigV4Signer(credentials: credentials, region: region)
        return { request in try signer.sign(&request, date: now()) }
    }

    /// Another connection like `service` (bulk: no retries inside, `--timeout` a request), on a
    /// transport of its own, for calls made side by side with it.
    package func anotherService(context: CommandContext) throws -> CognitoService {
        let other = CognitoService(
            endpoint: endpoint, transport: try context.separateTransport(), retryPolicy: .none)
        other.requestSigner = Self.signer(credentials, region, context.now)
        return other
    }

    /// A refusal the operator can act on (the table's `.ops` rows): no such user, or AWS
    /// credentials refused; nil otherwise.
    package static func refusal(_ error: CognitoError, username: String, poolId: String) -> AuthctlError? {
        guard !error.isServerError else { return nil }
        return RefusalTable.failure(error, at: .ops, RefusalFacts(username: username, poolId: poolId))
    }
}

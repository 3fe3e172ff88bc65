import CognitoClient
import Foundation

/// `signout --global --user NAME`: an operator forces any user of the pool out of every session
/// with AdminUserGlobalSignOut, signed with SigV4. Needs no stored session; touches no local store.
struct AdminSignOut {
    let settings: Settings
    let username: String
    let confirmed: Bool
    let output: OutputFormat

    /// Default access-token lifetime of an app client; the real one is the client's setting.
    static let defaultAccessTokenLifetime: Double = 3600

    func run(in context: CommandContext) throws {
        let poolId = try settings.checkedPoolId()
        let region = settings.region ?? Settings.region(fromPoolId: poolId) ?? "us-east-1"
        let endpoint = settings.endpoint ?? Settings.defaultEndpoint(region: region)
        let (credentials, source) = try AWSCredentialChain.resolve(environment: context.environment)
        try Confirmation.require("Sign out \(username) on ALL devices? [y/N] ", confirmed: confirmed, console: context.console)

        let service = CognitoService(endpoint: endpoint, transport: try context.transport(settings))
        let signer = SigV4Signer(credentials: credentials, region: region)
        let now = context.now
        service.requestSigner = { request in try signer.sign(&request, date: now()) }

        do {
            try service.adminUserGlobalSignOut(userPoolId: poolId, username: username)
        } catch let error as CognitoError {
            throw Self.failure(error, username: username, poolId: poolId, endpoint: endpoint)
        }

        let at = context.now()
        let exposureUntil = at.addingTimeInterval(Self.defaultAccessTokenLifetime)
        let operatorName = context.environment["USER"] ?? context.environment["LOGNAME"] ?? "unknown"
        context.console.message("audit: AdminUserGlobalSignOut user=\(username) pool=\(poolId) region=\(region) by=\(credentials.accessKeyId) (local user \(operatorName), credentials from \(source)) at=\(Format.iso8601(at))")
        switch output {
        case .json:
            context.printJSON(AdminSignOutReport(user: username, userPoolId: poolId, signedOutAt: at, exposureUntil: exposureUntil))
        case .text:
            context.console.message("Signed \(username) out of every device in \(poolId). Refresh tokens are revoked now.")
            context.console.message("Access and id tokens issued before now keep passing offline JWT checks for up to the app client's access-token lifetime (1 hour by default): until about \(Format.localTime(exposureUntil)).")
        }
    }

    static func failure(_ error: CognitoError, username: String, poolId: String, endpoint: String) -> AuthctlError {
        if error.kind == .service && !error.isThrottling && !error.isServerError {
            switch error.errorType ?? "" {
            case "UserNotFoundException":
                return AuthctlError(.inputRejected, "no user \(username) in \(poolId): \(error.message)")
            case "AccessDeniedException", "NotAuthorizedException", "UnrecognizedClientException",
                 "InvalidSignatureException", "IncompleteSignature", "MissingAuthenticationTokenException",
                 "ExpiredTokenException", "InvalidClientTokenId", "SignatureDoesNotMatch":
                return AuthctlError(.notAuthorized, "the service refused the AWS credentials: \(error.errorType ?? ""): \(error.message)")
            default:
                break
            }
        }
        let failure = AuthctlError.from(error, endpoint: endpoint)
        if failure.code == .unavailable || failure.code == .throttled {
            return AuthctlError(failure.code, "\(failure.message)\nNothing was revoked: \(username) is still signed in.")
        }
        return failure
    }
}

struct AdminSignOutReport: Encodable {
    var signedOutLocally = false
    var globalSignOut = "ok"
    var revokeToken = "skipped"
    var user: String
    var userPoolId: String
    var signedOutAt: Date
    var exposureUntil: Date
}

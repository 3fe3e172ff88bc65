#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Amazon Cognito identity pools (`cognito-identity`), the calls of the enhanced (simplified)
/// authenticated flow: GetId, then GetCredentialsForIdentity. Both are unsigned: the login
/// token in `Logins` is the authentication. Same JSON 1.1 protocol and retry policy as user
/// pools, with `X-Amz-Target: AWSCognitoIdentityService.<Operation>`.
public final class CognitoIdentityService {
    let service: CognitoService

    public init(endpoint: String, transport: HTTPTransport, retryPolicy: RetryPolicy = .standard) {
        service = CognitoService(
            endpoint: endpoint, transport: transport, retryPolicy: retryPolicy,
            targetPrefix: "AWSCognitoIdentityService")
    }

    public var endpoint: String { service.endpoint }

    /// `https://cognito-identity.<region>.amazonaws.com/`
    public static func defaultEndpoint(region: String) -> String {
        "https://cognito-identity.\(region).amazonaws.com/"
    }

    /// The `Logins` key of a user pool: `cognito-idp.<region>.amazonaws.com/<pool id>`, the
    /// region being the pool id's own prefix.
    public static func providerName(userPoolId: String) -> String {
        let region = userPoolId.split(separator: "_", maxSplits: 1).first.map(String.init) ?? ""
        return "cognito-idp.\(region).amazonaws.com/\(userPoolId)"
    }

    /// An identity pool id is `<region>:<uuid>` (the model's pattern `[\w-]+:[0-9a-f-]+`, at most
    /// 55 characters), and the region is a real one's shape.
    public static func isValidIdentityPoolId(_ id: String) -> Bool {
        id.count <= 55 && AWSName.isIdentityPoolIdShape(id)
    }

    /// `eu-west-1:0000…` -> `eu-west-1`.
    public static func region(ofIdentityPool id: String) -> String? {
        guard let colon = id.firstIndex(of: ":"), colon != id.startIndex else { return nil }
        return String(id[..<colon])
    }

    /// GetId: the identity id of this login in the pool (created on first use). Repeating it
    /// returns the same id, so it is retried after an unknown outcome.
    public func getId(identityPoolId: String, logins: [String: String], accountId: String? = nil) throws -> String {
        let response: GetIdResponse = try perform(
            "GetId",
            GetIdRequest(
                accountId: accountId, identityPoolId: identityPoolId,
                logins: logins))
        guard let identityId = response.identityId, !identityId.isEmpty else {
            throw CognitoIdentityError(reason: .malformedAnswer, message: "GetId answered without an IdentityId")
        }
        return identityId
    }

    /// GetCredentialsForIdentity: temporary credentials of the identity's role (`customRoleArn`
    /// picks one where the pool's rules allow a choice). Read-only, so retried.
    /// `now` (the caller's clock) bounds the expiry: no later than a role session can last from it.
    public func getCredentialsForIdentity(
        identityId: String, logins: [String: String],
        customRoleArn: String? = nil, now: Date = Date()
    ) throws -> IdentityCredentials {
        let response: GetCredentialsForIdentityResponse = try perform(
            "GetCredentialsForIdentity",
            GetCredentialsForIdentityRequest(identityId: identityId, logins: logins, customRoleArn: customRoleArn))
        guard let wire = response.credentials, let accessKeyId = wire.accessKeyId, !accessKeyId.isEmpty,
            let secretKey = wire.secretKey, !secretKey.isEmpty, let sessionToken = wire.sessionToken,
            !sessionToken.isEmpty, let expiration = wire.expiration.flatMap(OutsideNumbers.date(epochSeconds:))
        else {
            throw CognitoIdentityError(
                reason: .malformedAnswer,
                message: "GetCredentialsForIdentity answered without complete Credentials")
        }
        // They go into `exec`'s environment and `export` lines: printable ASCII only.
        guard [accessKeyId, secretKey, sessionToken].allSatisfy({ $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F } })
        else {
            throw CognitoIdentityError(
                reason: .malformedAnswer,
                message: "GetCredentialsForIdentity answered with credentials holding characters no key has")
        }
        // Bounded where it is read (an Expiration of -1e300 was shown as valid
        // until the year 5,838,270): a date 1970-9999, and no later than a role session can last.
        let latest = now.addingTimeInterval(OutsideNumbers.maxCredentialsLifetime)
        let credentials = TemporaryAWSCredentials(
            accessKeyId: accessKeyId, secretAccessKey: secretKey, sessionToken: sessionToken,
            expiration: min(expiration, latest))
        return IdentityCredentials(identityId: response.identityId ?? identityId, credentials: credentials)
    }

    private func perform<Request: Encodable, Response: Decodable>(_ operation: String, _ request: Request) throws
        -> Response
    {
        do {
            return try service.call(operation, request, idempotent: true)
        } catch let error as CognitoError {
            throw CognitoIdentityError(error)
        }
    }
}

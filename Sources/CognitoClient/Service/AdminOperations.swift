#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// IAM-signed (admin) operations besides AdminUserGlobalSignOut (Operations.swift). Shapes from
// Cognito's service model (botocore cognito-idp 2016-04-18); only the members authctl uses are decoded.

struct DescribeUserPoolClientRequest: Encodable {
    var userPoolId: String
    var clientId: String
}

public struct DescribeUserPoolClientResponse: Decodable, Sendable {
    public var userPoolClient: UserPoolClientType?
}

/// The token lifetimes of an app client. The client's secret, also in the answer, is not decoded.
public struct UserPoolClientType: Decodable, Sendable, Equatable {
    public var clientId: String?
    /// In `tokenValidityUnits.accessToken` (hours when unset); nil: the service's default, 1 hour.
    public var accessTokenValidity: Int?
    public var idTokenValidity: Int?
    public var tokenValidityUnits: TokenValidityUnitsType?

    public init(clientId: String? = nil, accessTokenValidity: Int? = nil, idTokenValidity: Int? = nil,
                tokenValidityUnits: TokenValidityUnitsType? = nil) {
        self.clientId = clientId
        self.accessTokenValidity = accessTokenValidity
        self.idTokenValidity = idTokenValidity
        self.tokenValidityUnits = tokenValidityUnits
    }

    /// The access token's lifetime in seconds, as the service applies it (default 1 hour).
    public var accessTokenLifetime: Double {
        Self.seconds(accessTokenValidity, unit: tokenValidityUnits?.accessToken)
    }

    /// The id token's lifetime in seconds, as the service applies it (default 1 hour).
    public var idTokenLifetime: Double {
        Self.seconds(idTokenValidity, unit: tokenValidityUnits?.idToken)
    }

    /// The longest access or id token lifetime Cognito allows (its range is 5 minutes to 1 day).
    public static let maximumTokenLifetime: Double = 86400

    /// `value` in `unit` (`seconds`, `minutes`, `hours`, `days`; hours when absent), 1 hour when
    /// unset; never more than `maximumTokenLifetime`, whatever the answer says (AccessTokenValidity
    /// 2e14 days is no lifetime a token can have).
    static func seconds(_ value: Int?, unit: String?) -> Double {
        guard let value, value > 0 else { return 3600 }
        let unitSeconds: Double
        switch unit ?? "hours" {
        case "seconds": unitSeconds = 1
        case "minutes": unitSeconds = 60
        case "days": unitSeconds = 86400
        default: unitSeconds = 3600
        }
        return min(Double(value) * unitSeconds, maximumTokenLifetime)
    }
}

public struct TokenValidityUnitsType: Decodable, Sendable, Equatable {
    public var accessToken: String?
    public var idToken: String?
    public var refreshToken: String?

    public init(accessToken: String? = nil, idToken: String? = nil, refreshToken: String? = nil) {
        self.accessToken = accessToken
        self.idToken = idToken
        self.refreshToken = refreshToken
    }
}

extension CognitoService {
    /// DescribeUserPoolClient (IAM-signed): an app client's settings. Read-only, so retried.
    public func describeUserPoolClient(userPoolId: String, clientId: String) throws -> DescribeUserPoolClientResponse {
        try call("DescribeUserPoolClient", DescribeUserPoolClientRequest(userPoolId: userPoolId, clientId: clientId),
                 idempotent: true)
    }
}

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

    public init(
        clientId: String? = nil, accessTokenValidity: Int? = nil, idTokenValidity: Int? = nil,
        tokenValidityUnits: TokenValidityUnitsType? = nil
    ) {
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
        try call(
            "DescribeUserPoolClient", DescribeUserPoolClientRequest(userPoolId: userPoolId, clientId: clientId),
            idempotent: true)
    }
}

// MARK: listing users and disabling them (the ops commands)

struct ListUsersRequest: Encodable {
    var userPoolId: String
    var limit: Int?
    var paginationToken: String?
    var filter: String?
}

/// One page of ListUsers. `paginationToken` is nil on the last page.
public struct ListUsersResponse: Decodable, Sendable {
    public var users: [ListedUser]?
    public var paginationToken: String?
}

struct ListUsersInGroupRequest: Encodable {
    var userPoolId: String
    var groupName: String
    var limit: Int?
    var nextToken: String?
}

/// One page of ListUsersInGroup. `nextToken` is nil on the last page.
public struct ListUsersInGroupResponse: Decodable, Sendable {
    public var users: [ListedUser]?
    public var nextToken: String?
}

/// A user in a listing (UserType): only what the ops commands need. Attributes are not decoded.
public struct ListedUser: Decodable, Sendable, Equatable {
    public var username: String?
    public var enabled: Bool?
    public var userStatus: String?

    public init(username: String?, enabled: Bool? = nil, userStatus: String? = nil) {
        self.username = username
        self.enabled = enabled
        self.userStatus = userStatus
    }
}

extension CognitoService {
    /// The largest page ListUsers and ListUsersInGroup return (QueryLimitType).
    public static let maximumPageSize = 60

    /// ListUsers (IAM-signed): one page of the pool's users, optionally filtered (`email ^= "x"`).
    /// Read-only, so retried.
    public func listUsers(
        userPoolId: String, filter: String?, paginationToken: String?,
        limit: Int = CognitoService.maximumPageSize
    ) throws -> ListUsersResponse {
        try call(
            "ListUsers",
            ListUsersRequest(
                userPoolId: userPoolId, limit: limit, paginationToken: paginationToken,
                filter: filter), idempotent: true)
    }

    /// ListUsersInGroup (IAM-signed): one page of a group's members. Read-only, so retried.
    public func listUsersInGroup(
        userPoolId: String, groupName: String, nextToken: String?,
        limit: Int = CognitoService.maximumPageSize
    ) throws -> ListUsersInGroupResponse {
        try call(
            "ListUsersInGroup",
            ListUsersInGroupRequest(
                userPoolId: userPoolId, groupName: groupName, limit: limit,
                nextToken: nextToken), idempotent: true)
    }

    /// AdminDisableUser (IAM-signed): the user can no longer sign in. Repeating it is harmless.
    public func adminDisableUser(userPoolId: String, username: String) throws {
        _ = try call(
            "AdminDisableUser", AdminUserRequest(userPoolId: userPoolId, username: username),
            idempotent: true, as: EmptyResponse.self)
    }
}

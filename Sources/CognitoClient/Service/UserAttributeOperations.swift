#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The signed-in user's own account: attributes, their verification, the factors, deleting the
// account. Shapes from botocore's cognito-idp 2016-04-18 model (UpdateUserAttributes,
// GetUserAttributeVerificationCode, VerifyUserAttribute, DeleteUserAttributes, DeleteUser,
// GetUserAuthFactors), and DescribeUserPool's UserAttributeUpdateSettings for the operator.

struct UpdateUserAttributesRequest: Encodable {
    var userAttributes: [AttributeType]
    var accessToken: String
}

public struct UpdateUserAttributesResponse: Decodable, Sendable {
    /// Where the codes that verify the new values went.
    public var codeDeliveryDetailsList: [CodeDeliveryDetails]?
}

struct AttributeVerificationCodeRequest: Encodable {
    var accessToken: String
    var attributeName: String
}

struct VerifyUserAttributeRequest: Encodable {
    var accessToken: String
    var attributeName: String
    var code: String
}

struct DeleteUserAttributesRequest: Encodable {
    var userAttributeNames: [String]
    var accessToken: String
}

/// GetUserAuthFactors: the MFA and the first factors (`AuthFactorType`) a user has.
public struct GetUserAuthFactorsResponse: Decodable, Sendable {
    public var username: String
    public var preferredMfaSetting: String?
    public var userMFASettingList: [String]?
    /// `PASSWORD`, `EMAIL_OTP`, `SMS_OTP`, `WEB_AUTHN`.
    public var configuredUserAuthFactors: [String]?

    enum CodingKeys: String, CodingKey {
        case username, preferredMfaSetting, configuredUserAuthFactors
        case userMFASettingList = "userMFASettingList"
    }
}

struct DescribeUserPoolRequest: Encodable {
    var userPoolId: String
}

/// The part of DescribeUserPool's UserPoolType that says how attribute changes are verified.
public struct DescribeUserPoolResponse: Decodable, Sendable {
    public struct UserPool: Decodable, Sendable {
        public struct UpdateSettings: Decodable, Sendable {
            /// `email`, `phone_number`: changes that wait for verification (the old value stays).
            public var attributesRequireVerificationBeforeUpdate: [String]?
        }
        public var userAttributeUpdateSettings: UpdateSettings?
        public var autoVerifiedAttributes: [String]?
        /// The service's estimate of the pool's users.
        public var estimatedNumberOfUsers: Int?
    }
    public var userPool: UserPool
}

extension CognitoService {
    /// UpdateUserAttributes. Not repeated after an unknown outcome: each call sends new codes.
    public func updateUserAttributes(accessToken: String, attributes: [AttributeType]) throws
        -> UpdateUserAttributesResponse
    {
        try call(
            "UpdateUserAttributes", UpdateUserAttributesRequest(userAttributes: attributes, accessToken: accessToken),
            idempotent: false)
    }

    /// GetUserAttributeVerificationCode: sends a code to the attribute's (new) value. Each call
    /// voids the previous code, so it is not repeated.
    public func getUserAttributeVerificationCode(accessToken: String, attributeName: String) throws
        -> CodeDeliveryDetails?
    {
        try call(
            "GetUserAttributeVerificationCode",
            AttributeVerificationCodeRequest(accessToken: accessToken, attributeName: attributeName),
            idempotent: false, as: CodeDeliveryResponse.self
        ).codeDeliveryDetails
    }

    /// VerifyUserAttribute: a code is used once, so it is not repeated.
    public func verifyUserAttribute(accessToken: String, attributeName: String, code: String) throws {
        _ = try call(
            "VerifyUserAttribute",
            VerifyUserAttributeRequest(accessToken: accessToken, attributeName: attributeName, code: code),
            idempotent: false, as: EmptyResponse.self)
    }

    /// DeleteUserAttributes: deleting twice leaves the same account, so it is retried.
    public func deleteUserAttributes(accessToken: String, names: [String]) throws {
        _ = try call(
            "DeleteUserAttributes", DeleteUserAttributesRequest(userAttributeNames: names, accessToken: accessToken),
            idempotent: true, as: EmptyResponse.self)
    }

    /// DeleteUser. Not repeated: a second try after a lost answer is refused as an unknown user.
    public func deleteUser(accessToken: String) throws {
        _ = try call(
            "DeleteUser", AccessTokenRequest(accessToken: accessToken), idempotent: false, as: EmptyResponse.self)
    }

    /// GetUserAuthFactors. Read-only, so retried.
    public func getUserAuthFactors(accessToken: String) throws -> GetUserAuthFactorsResponse {
        try call("GetUserAuthFactors", AccessTokenRequest(accessToken: accessToken), idempotent: true)
    }

    /// DescribeUserPool (IAM-signed). Read-only, so retried.
    public func describeUserPool(userPoolId: String) throws -> DescribeUserPoolResponse {
        try call("DescribeUserPool", DescribeUserPoolRequest(userPoolId: userPoolId), idempotent: true)
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The account's own life without a session: SignUp, ConfirmSignUp, ResendConfirmationCode,
// ForgotPassword, ConfirmForgotPassword. Shapes from botocore's cognito-idp 2016-04-18 model.

/// Where Cognito sent a code (`CodeDeliveryDetailsType`): `a***@e***`, `EMAIL`, `email`.
public struct CodeDeliveryDetails: Codable, Sendable, Equatable {
    public var destination: String?
    /// `SMS` or `EMAIL`.
    public var deliveryMedium: String?
    /// The attribute the code verifies, e.g. `email`.
    public var attributeName: String?

    public init(destination: String?, deliveryMedium: String?, attributeName: String?) {
        self.destination = destination
        self.deliveryMedium = deliveryMedium
        self.attributeName = attributeName
    }
}

public struct SignUpResponse: Decodable, Sendable {
    public var userConfirmed: Bool
    public var userSub: String
    public var codeDeliveryDetails: CodeDeliveryDetails?
}

struct SignUpRequest: Encodable {
    var clientId: String
    var secretHash: String?
    var username: String
    var password: String
    var userAttributes: [AttributeType]?
}

struct ConfirmSignUpRequest: Encodable {
    var clientId: String
    var secretHash: String?
    var username: String
    var confirmationCode: String
}

/// ResendConfirmationCode and ForgotPassword take the same members.
struct UsernameRequest: Encodable {
    var clientId: String
    var secretHash: String?
    var username: String
}

struct ConfirmForgotPasswordRequest: Encodable {
    var clientId: String
    var secretHash: String?
    var username: String
    var confirmationCode: String
    var password: String
}

struct CodeDeliveryResponse: Decodable {
    var codeDeliveryDetails: CodeDeliveryDetails?
}

extension AttributeType {
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension CognitoService {
    // None of these is repeated after an unknown outcome: a repeated SignUp is refused as an
    // existing user, a repeated confirmation as already done, and every repeated send makes a
    // new code that voids the one already on its way.

    /// SignUp: a new, unconfirmed account (unless the pool confirms it at once).
    public func signUp(username: String, password: String, attributes: [AttributeType], client: AppClient) throws
        -> SignUpResponse
    {
        try call(
            "SignUp",
            SignUpRequest(
                clientId: client.clientId, secretHash: client.secretHash(for: username),
                username: username, password: password,
                userAttributes: attributes.isEmpty ? nil : attributes),
            idempotent: false)
    }

    /// ConfirmSignUp with the code the pool sent.
    public func confirmSignUp(username: String, code: String, client: AppClient) throws {
        _ = try call(
            "ConfirmSignUp",
            ConfirmSignUpRequest(
                clientId: client.clientId, secretHash: client.secretHash(for: username),
                username: username, confirmationCode: code),
            idempotent: false, as: EmptyResponse.self)
    }

    /// ResendConfirmationCode: a new sign-up code (the previous one stops working).
    public func resendConfirmationCode(username: String, client: AppClient) throws -> CodeDeliveryDetails? {
        try sendCode("ResendConfirmationCode", username: username, client: client)
    }

    /// ForgotPassword: sends a code to reset the password with.
    public func forgotPassword(username: String, client: AppClient) throws -> CodeDeliveryDetails? {
        try sendCode("ForgotPassword", username: username, client: client)
    }

    private func sendCode(_ operation: String, username: String, client: AppClient) throws -> CodeDeliveryDetails? {
        let response: CodeDeliveryResponse = try call(
            operation,
            UsernameRequest(
                clientId: client.clientId, secretHash: client.secretHash(for: username), username: username),
            idempotent: false)
        return response.codeDeliveryDetails
    }

    /// ConfirmForgotPassword: the code and the new password.
    public func confirmForgotPassword(username: String, code: String, newPassword: String, client: AppClient) throws {
        _ = try call(
            "ConfirmForgotPassword",
            ConfirmForgotPasswordRequest(
                clientId: client.clientId, secretHash: client.secretHash(for: username),
                username: username, confirmationCode: code, password: newPassword),
            idempotent: false, as: EmptyResponse.self)
    }
}

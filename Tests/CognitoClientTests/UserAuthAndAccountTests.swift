import Foundation
import XCTest

@testable import CognitoClient

/// Choice-based sign-in (USER_AUTH) and the account operations, on the wire.
final class UserAuthAndAccountTests: XCTestCase {
    private let pool = "eu-west-1_myPool"

    private func tokens() -> [String: Any] {
        ["AccessToken": TestJWT.make(["username": "alice", "sub": "s-1", "exp": 1_900_000_000]), "ExpiresIn": 3600]
    }

    private func service(_ transport: ScriptedTransport) -> CognitoService {
        CognitoService(
            endpoint: "https://cognito-idp.eu-west-1.amazonaws.com", transport: transport,
            retryPolicy: RetryPolicy(maxAttempts: 3, sleep: { _ in }, random: { 0.5 }))
    }

    private func authenticator(_ transport: ScriptedTransport, secret: String? = nil) -> Authenticator {
        Authenticator(
            service: service(transport), client: AppClient(userPoolId: pool, clientId: "client1", clientSecret: secret))
    }

    func testSelectChallengeThenEmailCode() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json([
                "ChallengeName": "SELECT_CHALLENGE", "Session": "s1", "ChallengeParameters": [:],
                "AvailableChallenges": ["PASSWORD", "PASSWORD_SRP", "EMAIL_OTP"],
            ]),
            ScriptedTransport.json([
                "ChallengeName": "EMAIL_OTP", "Session": "s2",
                "ChallengeParameters": ["CODE_DELIVERY_DESTINATION": "a***@e***", "USERNAME": "alice"],
            ]),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        var offered: [ChallengeName] = []
        var passwordAsked = false
        let handlers = UserAuthHandlers(
            choose: {
                offered = $0
                return "EMAIL_OTP"
            },
            password: {
                passwordAsked = true
                return "pw"
            },
            respond: { challenge in
                XCTAssertEqual(challenge.name, "EMAIL_OTP")
                XCTAssertEqual(challenge.parameters["CODE_DELIVERY_DESTINATION"], "a***@e***")
                return ["EMAIL_OTP_CODE": "123456"]
            })
        let result = try authenticator(transport, secret: "shh").signInUserAuth(
            username: "alice", preferred: nil, handlers: handlers)
        XCTAssertEqual(result.username, "alice")
        XCTAssertEqual(offered, ["PASSWORD", "PASSWORD_SRP", "EMAIL_OTP"])
        XCTAssertFalse(passwordAsked)
        XCTAssertEqual(transport.body(0)["AuthFlow"] as? String, "USER_AUTH")
        let start = transport.body(0)["AuthParameters"] as? [String: String]
        XCTAssertEqual(start?["USERNAME"], "alice")
        XCTAssertNil(start?["PREFERRED_CHALLENGE"])
        XCTAssertNotNil(start?["SECRET_HASH"])
        XCTAssertEqual(transport.body(1)["ChallengeName"] as? String, "SELECT_CHALLENGE")
        XCTAssertEqual(transport.body(1)["Session"] as? String, "s1")
        let select = transport.body(1)["ChallengeResponses"] as? [String: String]
        XCTAssertEqual(select?["ANSWER"], "EMAIL_OTP")
        XCTAssertNil(select?["PASSWORD"])
        XCTAssertNotNil(select?["SECRET_HASH"])
        let answer = transport.body(2)["ChallengeResponses"] as? [String: String]
        XCTAssertEqual(answer?["EMAIL_OTP_CODE"], "123456")
        XCTAssertEqual(transport.body(2)["Session"] as? String, "s2")
    }

    func testPreferredPasswordIsSentWithTheStartAndNotRepeated() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.error("InternalErrorException", "boom", status: 500),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        let handlers = UserAuthHandlers(
            choose: { _ in
                XCTFail("no choice asked")
                return ""
            }, password: { "pw" },
            respond: { _ in
                XCTFail("no challenge")
                return [:]
            })
        XCTAssertThrowsError(
            try authenticator(transport).signInUserAuth(username: "alice", preferred: .password, handlers: handlers))
        XCTAssertEqual(transport.requests.count, 1)
        XCTAssertEqual(
            transport.body(0)["AuthParameters"] as? [String: String],
            ["USERNAME": "alice", "PREFERRED_CHALLENGE": "PASSWORD", "PASSWORD": "pw"])
    }

    func testPreferredSRPSendsSRPAAndAsksThePasswordOnce() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.error("NotAuthorizedException", "Incorrect username or password.")
        ])
        var asked = 0
        let handlers = UserAuthHandlers(
            choose: { $0[0] },
            password: {
                asked += 1
                return "pw"
            }, respond: { _ in [:] })
        XCTAssertThrowsError(
            try authenticator(transport).signInUserAuth(username: "alice", preferred: .passwordSRP, handlers: handlers))
        let start = transport.body(0)["AuthParameters"] as? [String: String]
        XCTAssertEqual(start?["PREFERRED_CHALLENGE"], "PASSWORD_SRP")
        XCTAssertEqual(start?["SRP_A"]?.count ?? 0 > 100, true)
        XCTAssertNil(start?["PASSWORD"])
        XCTAssertEqual(asked, 1)
    }

    func testAChoiceNotOfferedIsRefusedBeforeAnswering() {
        let transport = ScriptedTransport([
            ScriptedTransport.json([
                "ChallengeName": "SELECT_CHALLENGE", "Session": "s1", "AvailableChallenges": ["EMAIL_OTP"],
            ])
        ])
        let handlers = UserAuthHandlers(choose: { _ in "SMS_OTP" }, password: { "pw" }, respond: { _ in [:] })
        XCTAssertThrowsError(
            try authenticator(transport).signInUserAuth(username: "alice", preferred: nil, handlers: handlers)
        ) { error in
            XCTAssertEqual((error as? CognitoError)?.kind, .invalidInput)
        }
        XCTAssertEqual(transport.requests.count, 1)
    }

    func testAccountRefusalsAreClassifiedByErrorType() {
        let cases: [(String, ServiceRefusal)] = [
            ("UsernameExistsException", .usernameExists), ("AliasExistsException", .aliasExists),
            ("CodeDeliveryFailureException", .codeDeliveryFailed), ("InvalidPasswordException", .invalidPassword),
            ("CodeMismatchException", .codeMismatch), ("ExpiredCodeException", .codeExpired),
            ("LimitExceededException", .throttled), ("UserNotConfirmedException", .userNotConfirmed),
            ("PasswordResetRequiredException", .passwordResetRequired),
        ]
        for (type, expected) in cases {
            XCTAssertEqual(CognitoError.service(type, "words").refusal, expected, type)
        }
    }

    func testSignUpWireFormat() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json([
                "UserConfirmed": false, "UserSub": "sub-9",
                "CodeDeliveryDetails": [
                    "Destination": "c***@e***", "DeliveryMedium": "EMAIL", "AttributeName": "email",
                ],
            ])
        ])
        let client = AppClient(userPoolId: pool, clientId: "client1", clientSecret: "shh")
        let response = try service(transport).signUp(
            username: "carol", password: "pw",
            attributes: [AttributeType(name: "email", value: "c@example.com")], client: client)
        XCTAssertEqual(response.userSub, "sub-9")
        XCTAssertEqual(
            response.codeDeliveryDetails,
            CodeDeliveryDetails(destination: "c***@e***", deliveryMedium: "EMAIL", attributeName: "email"))
        let body = transport.body(0)
        XCTAssertEqual(Set(body.keys), ["ClientId", "SecretHash", "Username", "Password", "UserAttributes"])
        XCTAssertEqual(body["SecretHash"] as? String, client.secretHash(for: "carol"))
        XCTAssertEqual(
            (body["UserAttributes"] as? [[String: String]])?.first, ["Name": "email", "Value": "c@example.com"])
    }

    func testAccountCallsAreNotRepeatedAfterAnUnknownOutcome() {
        let client = AppClient(userPoolId: pool, clientId: "client1")
        for call in [
            { (s: CognitoService) in _ = try s.forgotPassword(username: "a", client: client) },
            { (s: CognitoService) in try s.confirmSignUp(username: "a", code: "1", client: client) },
            { (s: CognitoService) in
                try s.confirmForgotPassword(username: "a", code: "1", newPassword: "p", client: client)
            },
        ] {
            let transport = ScriptedTransport([
                ScriptedTransport.error("InternalErrorException", "boom", status: 500),
                ScriptedTransport.json([:]),
            ])
            XCTAssertThrowsError(try call(service(transport)))
            XCTAssertEqual(transport.requests.count, 1)
        }
    }

    func testConfirmForgotPasswordWireFormat() throws {
        let transport = ScriptedTransport([ScriptedTransport.json([:])])
        try service(transport).confirmForgotPassword(
            username: "alice", code: "123456", newPassword: "New-pw1!",
            client: AppClient(userPoolId: pool, clientId: "client1"))
        XCTAssertEqual(transport.operations, ["ConfirmForgotPassword"])
        XCTAssertEqual(
            transport.body(0) as? [String: String],
            ["ClientId": "client1", "Username": "alice", "ConfirmationCode": "123456", "Password": "New-pw1!"])
    }
}

import Foundation
import XCTest

@testable import CognitoClient

/// The identity-pool client against scripted answers shaped as botocore's cognito-identity
/// 2014-06-30 model says (GetIdResponse, GetCredentialsForIdentityResponse, the listed errors).
final class CognitoIdentityServiceTests: XCTestCase {
    private let pool = "eu-west-1:11111111-2222-3333-4444-555555555555"
    private let provider = "cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC123"
    private let idToken = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"

    private func service(_ steps: [ScriptedTransport.Step]) -> (CognitoIdentityService, ScriptedTransport) {
        let transport = ScriptedTransport(steps)
        let noWait = RetryPolicy(sleep: { _ in })
        return (
            CognitoIdentityService(endpoint: "http://127.0.0.1:1", transport: transport, retryPolicy: noWait), transport
        )
    }

    func testGetIdSendsTheTargetAndLoginsAsTheModelNamesThem() throws {
        let (identity, transport) = service([ScriptedTransport.json(["IdentityId": "eu-west-1:abcd-0001"])])
        let id = try identity.getId(identityPoolId: pool, logins: [provider: idToken])
        XCTAssertEqual(id, "eu-west-1:abcd-0001")
        let target = transport.requests[0].headers.first { $0.name == "X-Amz-Target" }?.value
        XCTAssertEqual(target, "AWSCognitoIdentityService.GetId")
        XCTAssertNil(transport.requests[0].headers.first { $0.name == "Authorization" }, "GetId is unsigned")
        let body = transport.body(0)
        XCTAssertEqual(body["IdentityPoolId"] as? String, pool)
        // The provider name is a map key: it must reach the wire unchanged (no case conversion).
        XCTAssertEqual(body["Logins"] as? [String: String], [provider: idToken])
        XCTAssertNil(body["AccountId"])
    }

    func testGetCredentialsForIdentityDecodesEpochExpirationAndCustomRole() throws {
        let expiry = (Date().timeIntervalSince1970 + 3600).rounded(.down) + 0.5
        let (identity, transport) = service([
            ScriptedTransport.json([
                "IdentityId": "eu-west-1:abcd-0001",
                "Credentials": [
                    "AccessKeyId": "ASIAEXAMPLE", "SecretKey": "secret/key", "SessionToken": "session-token",
                    "Expiration": expiry,
                ],
            ])
        ])
        let answer = try identity.getCredentialsForIdentity(
            identityId: "eu-west-1:abcd-0001", logins: [provider: idToken],
            customRoleArn: "arn:aws:iam::123456789012:role/reader")
        XCTAssertEqual(answer.identityId, "eu-west-1:abcd-0001")
        XCTAssertEqual(answer.credentials.accessKeyId, "ASIAEXAMPLE")
        XCTAssertEqual(answer.credentials.secretAccessKey, "secret/key")
        XCTAssertEqual(answer.credentials.sessionToken, "session-token")
        XCTAssertEqual(answer.credentials.expiration.timeIntervalSince1970, expiry, accuracy: 0.001)
        XCTAssertEqual(transport.operations, ["GetCredentialsForIdentity"])
        let body = transport.body(0)
        XCTAssertEqual(body["IdentityId"] as? String, "eu-west-1:abcd-0001")
        XCTAssertEqual(body["CustomRoleArn"] as? String, "arn:aws:iam::123456789012:role/reader")
        XCTAssertEqual(body["Logins"] as? [String: String], [provider: idToken])
    }

    func testIncompleteCredentialsAreAMalformedAnswer() {
        let (identity, _) = service([
            ScriptedTransport.json(["IdentityId": "eu-west-1:x", "Credentials": ["AccessKeyId": "A"]])
        ])
        XCTAssertThrowsError(try identity.getCredentialsForIdentity(identityId: "eu-west-1:x", logins: [:])) { error in
            XCTAssertEqual((error as? CognitoIdentityError)?.reason, .malformedAnswer)
        }
    }

    /// An Expiration of -1e300 (or 1e300, or years away) was taken as it came;
    /// and credentials holding a newline went into `exec`'s environment. Bounded where read.
    func testExpirationIsBoundedAndCredentialsChecked() throws {
        for bad in [-1e300, 1e300, -1.0] {
            let (identity, _) = service([
                ScriptedTransport.json([
                    "Credentials": [
                        "AccessKeyId": "ASIA", "SecretKey": "s", "SessionToken": "t", "Expiration": bad,
                    ]
                ])
            ])
            XCTAssertThrowsError(
                try identity.getCredentialsForIdentity(identityId: "eu-west-1:x", logins: [:]), "\(bad)"
            ) {
                XCTAssertEqual(($0 as? CognitoIdentityError)?.reason, .malformedAnswer)
            }
        }
        let (far, _) = service([
            ScriptedTransport.json([
                "Credentials": [
                    "AccessKeyId": "ASIA", "SecretKey": "s", "SessionToken": "t", "Expiration": 250_000_000_000.0,
                ]
            ])
        ])
        let answer = try far.getCredentialsForIdentity(identityId: "eu-west-1:x", logins: [:])
        XCTAssertLessThanOrEqual(answer.credentials.expiration.timeIntervalSinceNow, 12 * 3600 + 5)
        let (control, _) = service([
            ScriptedTransport.json([
                "Credentials": [
                    "AccessKeyId": "ASIA", "SecretKey": "s", "SessionToken": "t\nX=1",
                    "Expiration": Date().timeIntervalSince1970 + 60,
                ]
            ])
        ])
        XCTAssertThrowsError(try control.getCredentialsForIdentity(identityId: "eu-west-1:x", logins: [:]))
    }

    func testErrorsAreClassifiedByTheirCode() {
        let cases: [(String, Int, CognitoIdentityError.Reason)] = [
            ("NotAuthorizedException", 400, .loginRefused),
            ("ResourceNotFoundException", 400, .notFound),
            ("InvalidParameterException", 400, .invalidParameter),
            ("ResourceConflictException", 400, .loginConflict),
            ("InvalidIdentityPoolConfigurationException", 400, .noUsableRole),
            ("ExternalServiceException", 400, .externalService),
            ("LimitExceededException", 400, .throttled),
            ("SomethingNewException", 400, .other),
        ]
        for (code, status, reason) in cases {
            let (identity, _) = service([ScriptedTransport.error(code, "a message", status: status)])
            XCTAssertThrowsError(try identity.getId(identityPoolId: pool, logins: [provider: idToken]), code) { error in
                let failure = error as? CognitoIdentityError
                XCTAssertEqual(failure?.reason, reason, code)
                XCTAssertEqual(failure?.errorType, code)
            }
        }
    }

    func testThrottlingAndServerFailuresAreRetriedThenReported() throws {
        let (identity, transport) = service([
            ScriptedTransport.error("TooManyRequestsException", "Rate exceeded"),
            ScriptedTransport.error("InternalErrorException", "oops", status: 500),
            ScriptedTransport.json(["IdentityId": "eu-west-1:abcd-0002"]),
        ])
        XCTAssertEqual(try identity.getId(identityPoolId: pool, logins: [provider: idToken]), "eu-west-1:abcd-0002")
        XCTAssertEqual(transport.operations, ["GetId", "GetId", "GetId"])

        let (failing, _) = service(
            Array(repeating: ScriptedTransport.error("InternalErrorException", "oops", status: 500), count: 3))
        XCTAssertThrowsError(try failing.getId(identityPoolId: pool, logins: [:])) { error in
            XCTAssertEqual((error as? CognitoIdentityError)?.reason, .serviceFailure)
            XCTAssertEqual((error as? CognitoIdentityError)?.outcomeUnknown, true)
        }
    }

    func testTransportFailureIsUnreachable() {
        let (identity, _) = service(
            Array(repeating: .fail(TransportError(kind: .notConnected, message: "refused")), count: 3))
        XCTAssertThrowsError(try identity.getId(identityPoolId: pool, logins: [:])) { error in
            XCTAssertEqual((error as? CognitoIdentityError)?.reason, .unreachable)
        }
    }

    func testTheIdTokenNeverAppearsInAnErrorMessage() {
        let (identity, _) = service([
            ScriptedTransport.error("NotAuthorizedException", "Invalid login token. \(idToken) expired")
        ])
        XCTAssertThrowsError(try identity.getId(identityPoolId: pool, logins: [provider: idToken])) { error in
            XCTAssertFalse("\(error)".contains(idToken))
        }
    }

    func testCredentialsDescriptionAndMirrorHoldNoSecret() {
        let credentials = TemporaryAWSCredentials(
            accessKeyId: "ASIAEXAMPLE", secretAccessKey: "TOPSECRET",
            sessionToken: "SESSIONSECRET", expiration: Date(timeIntervalSince1970: 0))
        var dumped = ""
        dump(credentials, to: &dumped)
        for text in [credentials.description, String(reflecting: credentials), dumped] {
            XCTAssertFalse(text.contains("TOPSECRET") || text.contains("SESSIONSECRET"), text)
        }
    }

    func testNamesAndIds() {
        XCTAssertEqual(CognitoIdentityService.providerName(userPoolId: "eu-west-1_AbC123"), provider)
        XCTAssertEqual(
            CognitoIdentityService.defaultEndpoint(region: "eu-west-1"),
            "https://cognito-identity.eu-west-1.amazonaws.com/")
        XCTAssertTrue(CognitoIdentityService.isValidIdentityPoolId(pool))
        XCTAssertFalse(CognitoIdentityService.isValidIdentityPoolId("eu-west-1_AbC123"))
        XCTAssertFalse(CognitoIdentityService.isValidIdentityPoolId("eu-west-1:NOT-HEX"))
        XCTAssertEqual(CognitoIdentityService.region(ofIdentityPool: pool), "eu-west-1")
    }
}

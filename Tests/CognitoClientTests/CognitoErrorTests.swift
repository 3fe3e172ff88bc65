import Foundation
import XCTest

@testable import CognitoClient

final class CognitoErrorTests: XCTestCase {
    private func response(_ status: Int, headers: [String: String] = [:], body: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: Data(body.utf8))
    }

    func testTypeFromHeaderWinsAndSuffixIsStripped() {
        let error = CognitoErrorParser.parse(
            response(
                400,
                headers: [
                    "x-amzn-errortype":
                        "NotAuthorizedException:http://internal.amazon.com/coral/com.amazon.coral.validate/"
                ],
                body: #"{"__type":"SomethingElse","message":"Incorrect username or password."}"#))
        XCTAssertEqual(error.kind, .service)
        XCTAssertEqual(error.errorType, "NotAuthorizedException")
        XCTAssertEqual(error.message, "Incorrect username or password.")
        XCTAssertEqual(error.httpStatus, 400)
    }

    func testTypeFromBodyWithNamespacePrefix() {
        let error = CognitoErrorParser.parse(
            response(
                400,
                body:
                    #"{"__type":"com.amazonaws.cognito.identity.idp.model#UserNotFoundException","Message":"User does not exist."}"#
            ))
        XCTAssertEqual(error.errorType, "UserNotFoundException")
        XCTAssertEqual(error.message, "User does not exist.")
    }

    func testTypeFromCodeField() {
        let error = CognitoErrorParser.parse(
            response(400, body: #"{"code":"TooManyRequestsException","message":"Rate exceeded"}"#))
        XCTAssertEqual(error.errorType, "TooManyRequestsException")
        XCTAssertTrue(error.isThrottling)
    }

    func testPrefixAndSuffixTogether() {
        XCTAssertEqual(
            CognitoErrorParser.normalizeType(
                "aws.protocoltests.restjson#FooError:http://internal.amazon.com/coral/com.amazon.coral.validate/"),
            "FooError")
        XCTAssertEqual(CognitoErrorParser.normalizeType("FooError"), "FooError")
        XCTAssertNil(CognitoErrorParser.normalizeType(" "))
    }

    func testHTMLPageIsMalformedAndNamesTheStatus() {
        let error = CognitoErrorParser.parse(
            response(
                502, headers: ["content-type": "text/html"], body: "<html><body>Bad Gateway</body></html>"))
        XCTAssertEqual(error.kind, .malformedResponse)
        XCTAssertTrue(error.message.contains("HTTP 502"), error.message)
        XCTAssertTrue(error.message.contains("text/html"), error.message)
        XCTAssertTrue(error.isServerError)
    }

    func testTruncatedJSONAndEmptyBody() {
        let truncated = CognitoErrorParser.parse(response(400, body: #"{"__type":"NotAuthor"#))
        XCTAssertEqual(truncated.kind, .malformedResponse)
        XCTAssertTrue(truncated.message.contains("HTTP 400"))
        let empty = CognitoErrorParser.parse(response(503, body: ""))
        XCTAssertEqual(empty.kind, .malformedResponse)
        XCTAssertTrue(empty.message.contains("empty body"))
    }

    func testJSONWithoutType() {
        let error = CognitoErrorParser.parse(response(500, body: #"{"message":"oops"}"#))
        XCTAssertEqual(error.kind, .malformedResponse)
        XCTAssertTrue(error.message.contains("HTTP 500"))
    }

    func testMessageFallsBackToType() {
        let error = CognitoErrorParser.parse(response(400, body: #"{"__type":"InternalErrorException"}"#))
        XCTAssertEqual(error.message, "InternalErrorException")
    }

    // A service or emulator may quote the request in its error text (moto's GlobalSignOut answer
    // is the access token itself): no secret of the request reaches the message.
    func testMessageQuotingTheRequestsSecretsIsRedacted() {
        let request = HTTPRequest(
            url: "https://cognito.example/",
            body: Data(
                #"""
                {"AccessToken":"opaque-access-token-1234","ChallengeResponses":{"USERNAME":"alice","NEW_PASSWORD":"Hunter2-Hunter2"}}
                """#.utf8))
        let error = CognitoErrorParser.parse(
            response(
                400,
                body:
                    #"{"__type":"NotAuthorizedException","message":"opaque-access-token-1234 for alice: bad Hunter2-Hunter2"}"#
            ),
            request: request)
        XCTAssertEqual(error.errorType, "NotAuthorizedException")
        XCTAssertEqual(error.message, "[redacted] for alice: bad [redacted]")
    }

    func testTokenShapedTextIsRedactedEvenWithoutTheRequest() {
        let jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl"
        let error = CognitoErrorParser.parse(
            response(400, body: #"{"__type":"NotAuthorizedException","message":"Invalid token \#(jwt)."}"#))
        XCTAssertEqual(error.message, "Invalid token [redacted].")
    }

    func testOrdinaryMessagesAreKept() {
        let request = HTTPRequest(
            url: "https://cognito.example/", body: Data(#"{"Username":"alice","UserPoolId":"eu-west-1_abc"}"#.utf8))
        let error = CognitoErrorParser.parse(
            response(400, body: #"{"__type":"UserNotFoundException","message":"User alice does not exist."}"#),
            request: request)
        XCTAssertEqual(error.message, "User alice does not exist.")
    }
}

import XCTest

@testable import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The session and token-exchange operations' answers: checked and bounded before use.
final class SessionOperationsTests: XCTestCase {
    func testSessionIdsHaveTheModelsShape() {
        XCTAssertTrue(SessionID.isValid("tkn" + String(repeating: "a1", count: 12) + "z"))
        XCTAssertTrue(SessionID.isValid("sso" + String(repeating: "0", count: 25)))
        for bad in [
            "", "tkn", "abc" + String(repeating: "a", count: 25), "tkn" + String(repeating: "A", count: 25),
            "tkn" + String(repeating: "a", count: 26), "tkn" + String(repeating: "a", count: 24) + "\n",
            "tkn" + String(repeating: "a", count: 24) + "é",
        ] {
            XCTAssertFalse(SessionID.isValid(bad), bad)
        }
    }

    func testASessionsOutsideTextIsCutToTheModelsMaximum() throws {
        let long = String(repeating: "x", count: 5000)
        let body = """
            {"Sessions":[{"SessionId":"tkn\(String(repeating: "a", count: 25))","SessionType":"TOKEN",
            "DeviceType":"\(long)","LastLocation":{"City":"\(long)","Country":"NO"},"IsCurrentSession":true,
            "CreateDate":1.7e9,"LastActiveDate":1.8e9}]}
            """
        let listed = try CognitoService.decoder.decode(ListUserSessionsResponse.self, from: Data(body.utf8))
        let session = try XCTUnwrap(listed.sessions?.first)
        XCTAssertEqual(session.deviceType?.count, 1024)
        XCTAssertEqual(session.lastLocation?.city?.count, 256)
        XCTAssertEqual(session.kind, .token)
        XCTAssertNotNil(session.validId)
        XCTAssertEqual(session.isCurrentSession, true)
        let odd = UserSession(sessionId: "tkn../../etc", sessionType: "NEW")
        XCTAssertNil(odd.validId)
        XCTAssertNil(odd.kind)
    }

    func testADerivedTokenThatIsNoJWTIsRefused() {
        let body = #"{"IssuedToken":"not a jwt\n","IssuedTokenType":"ACCESS_TOKEN","TokenType":"Bearer"}"#
        XCTAssertThrowsError(try CognitoService.decoder.decode(DerivedToken.self, from: Data(body.utf8)))
        let machine = #"{"ClientAuthenticationResult":{"AccessToken":"a.b\u001b.c","ExpiresIn":3600}}"#
        XCTAssertThrowsError(try CognitoService.decoder.decode(GetClientTokenResponse.self, from: Data(machine.utf8)))
    }

    func testLinkedIsSentOnlyWhenAsked() throws {
        let plain = try CognitoService.encoder.encode(RevokeTokenRequest(token: "t", clientId: "c"))
        XCTAssertFalse(String(decoding: plain, as: UTF8.self).contains("RevokeAssociatedSessions"))
        let linked = try CognitoService.encoder.encode(
            RevokeTokenRequest(token: "t", clientId: "c", revokeAssociatedSessions: .linked))
        XCTAssertTrue(String(decoding: linked, as: UTF8.self).contains(#""RevokeAssociatedSessions":"LINKED""#))
    }
}

import Foundation
import XCTest

@testable import CognitoClient

final class JWTClaimsTests: XCTestCase {
    func testDecodesCognitoAccessTokenClaims() throws {
        let token = TestJWT.make([
            "sub": "abc-123", "username": "alice", "exp": 1_900_000_000, "iat": 1_899_996_400,
            "iss": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_pool", "token_use": "access",
            "client_id": "client1", "cognito:groups": ["admins", "ops"],
        ])
        let claims = try JWTClaims(token: token)
        XCTAssertEqual(claims.subject, "abc-123")
        XCTAssertEqual(claims.username, "alice")
        XCTAssertEqual(claims.expiresAt, Date(timeIntervalSince1970: 1_900_000_000))
        XCTAssertEqual(claims.tokenUse, "access")
        XCTAssertEqual(claims.clientId, "client1")
        XCTAssertEqual(claims.groups, ["admins", "ops"])
    }

    func testIdTokenUsernameClaim() throws {
        let claims = try JWTClaims(token: TestJWT.make(["cognito:username": "bob", "aud": "c", "email": "b@x.org"]))
        XCTAssertEqual(claims.username, "bob")
        XCTAssertEqual(claims.audience, "c")
        XCTAssertEqual(claims.email, "b@x.org")
        XCTAssertEqual(claims.groups, [])
    }

    func testPayloadNeedingPadding() throws {
        // Payload lengths that are 2 and 3 mod 4 once the padding is stripped.
        for name in ["a", "ab", "abc", "abcd"] {
            let claims = try JWTClaims(token: TestJWT.make(["username": name]))
            XCTAssertEqual(claims.username, name)
        }
    }

    func testMalformedTokens() {
        let cases = [
            "", "onlyonepart", "two.parts", "a.b.c.d",
            "eyJhbGciOiJub25lIn0.!!!notbase64!!!.sig",
            "eyJhbGciOiJub25lIn0.\(TestJWT.encode(["x": 1]).dropLast(0))=.sig",
            "eyJhbGciOiJub25lIn0.\(Data("[1,2]".utf8).base64EncodedString()).sig",
            "eyJhbGciOiJub25lIn0.\(Data("not json".utf8).base64EncodedString()).sig",
        ]
        for token in cases {
            XCTAssertThrowsError(try JWTClaims(token: token), "accepted \(token)") { error in
                XCTAssertTrue(error is JWTError)
            }
        }
    }

    func testMissingClaimsAreNil() throws {
        let claims = try JWTClaims(token: TestJWT.make(["exp": "soon"]))
        XCTAssertNil(claims.expiresAt)
        XCTAssertNil(claims.subject)
    }
}

import Foundation
import XCTest

@testable import CognitoClient

final class OutsideNumbersTests: XCTestCase {
    func testAbsurdClaimTimesAreAbsent() throws {
        for value in ["1e300", "-1e300", "-1", "253402300800"] {
            let claims = try JWTClaims(token: "e30." + Self.base64url("{\"exp\":\(value)}") + ".sig")
            XCTAssertNil(claims.expiresAt, value)
        }
        let claims = try JWTClaims(token: "e30." + Self.base64url("{\"exp\":1800000000}") + ".sig")
        XCTAssertEqual(claims.expiresAt, Date(timeIntervalSince1970: 1_800_000_000))
    }

    func testTokenValidityIsBoundedByCognitosMaximum() {
        let absurd = UserPoolClientType(
            accessTokenValidity: 200_000_000_000_000, idTokenValidity: Int.max,
            tokenValidityUnits: TokenValidityUnitsType(accessToken: "days", idToken: "days"))
        XCTAssertEqual(absurd.accessTokenLifetime, 86400)
        XCTAssertEqual(absurd.idTokenLifetime, 86400)
        XCTAssertEqual(
            UserPoolClientType(accessTokenValidity: 90, tokenValidityUnits: .init(accessToken: "minutes"))
                .accessTokenLifetime, 5400)
    }

    static func base64url(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}

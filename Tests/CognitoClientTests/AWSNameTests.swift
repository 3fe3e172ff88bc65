import CognitoClient
import Foundation
import XCTest

/// The hand-written checks against the regular expressions they replace (ICU's, as an oracle).
final class AWSNameTests: XCTestCase {
    private func matches(_ pattern: String, _ text: String) -> Bool {
        text.range(of: pattern, options: .regularExpression) != nil
    }

    private let samples = [
        "eu-west-1", "us-gov-west-1", "ap-southeast-2", "eu-west-1_AbC123", "us-east-1_x", "eu-west-1:0a1b-2c",
        "", "-", "eu", "eu-1", "eu-west", "eu-west-", "EU-west-1", "e-west-1", "eur-west-1", "eu--west-1", "eu-west-1a",
        "eu-west-1_", "_AbC", "eu-west-1_AbC_1", "eu-west-1_Ab-C", "eu-west-1_Äb", "eu-west-1:", "eu-west-1:0A",
        "eu-west-1:g",
        "eu-west-1:0a:0b", "eu-wést-1", "eu-west-١", "client1", "abc+def_1", "a b", "a-b", "ünïcode", "x\n",
    ]

    func testRegionUserPoolAndIdentityPoolShapes() {
        for text in samples {
            XCTAssertEqual(AWSName.isRegion(text), matches(#"^[a-z]{2}(-[a-z]+)+-[0-9]+$"#, text), text)
            XCTAssertEqual(
                AWSName.isUserPoolId(text), matches(#"^[a-z]{2}(-[a-z]+)+-[0-9]+_[0-9A-Za-z]+$"#, text), text)
            XCTAssertEqual(
                AWSName.isIdentityPoolIdShape(text), matches(#"^[a-z]{2}(-[a-z]+)+-[0-9]+:[0-9a-f-]+$"#, text), text)
        }
    }

    func testClientId() {
        for text in ["client1", "abc+def_1", "ABC123", "ünïcode"] { XCTAssertTrue(AWSName.isClientId(text), text) }
        for text in ["", "a b", "a-b", "x\n", "a/b", "a.b"] { XCTAssertFalse(AWSName.isClientId(text), text) }
    }
}

import CognitoClient
import XCTest

@testable import AuthctlCore

/// A new challenge name in CognitoClient must get an answerer (or a reason it has none): this
/// fails until `ChallengeTable` says what happens to it.
final class ChallengeTableTests: XCTestCase {
    func testEveryKnownChallengeHasAnAnswererOrAReason() {
        for name in ChallengeName.known {
            let answered = ChallengeTable.answerers[name] != nil
            let reason = ChallengeTable.notAnsweredHere[name]
            XCTAssertTrue(answered != (reason != nil), "\(name): exactly one of an answerer and a reason it has none")
        }
        // Neither table names a challenge CognitoClient does not know.
        let known = Set(ChallengeName.known)
        XCTAssertEqual(Set(ChallengeTable.answerers.keys).subtracting(known), [])
        XCTAssertEqual(Set(ChallengeTable.notAnsweredHere.keys).subtracting(known), [])
    }

}

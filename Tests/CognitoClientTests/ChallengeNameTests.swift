import Foundation
import XCTest

@testable import CognitoClient

final class ChallengeNameTests: XCTestCase {
    /// `ChallengeName.known` lists every name declared (the CLI's challenge-table test relies on
    /// it): read from the declarations in ChallengeName.swift, so a new name not added fails here.
    func testKnownListsEveryDeclaredName() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/CognitoClient/Auth/ChallengeName.swift").standardizedFileURL
        let text = try String(contentsOf: source, encoding: .utf8)
        let pattern = try NSRegularExpression(pattern: #"public static let \w+: ChallengeName = "([A-Z_]+)""#)
        let declared = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)).map {
            ChallengeName(String(text[Range($0.range(at: 1), in: text)!]))
        }
        XCTAssertGreaterThan(declared.count, 10)
        XCTAssertEqual(Set(ChallengeName.known), Set(declared))
        XCTAssertEqual(ChallengeName.known.count, Set(ChallengeName.known).count)
    }
}

import XCTest

@testable import AuthctlCore
@testable import authctl

final class TerminalTextTests: XCTestCase {
    func testControlCharactersAreShownEscaped() {
        let hostile = "a\u{1b}]0;title\u{07}\u{1b}[2J\u{9b}31m\u{7f}\u{202e}b"
        XCTAssertEqual(
            TerminalText.escaped(hostile, keepingNewlines: true),
            "a\\x1b]0;title\\x07\\x1b[2J\\u009b31m\\x7f\\u202eb")
    }

    func testNewlinesAreKeptOnlyWhereAsked() {
        XCTAssertEqual(TerminalText.escaped("one\ntwo\r", keepingNewlines: true), "one\ntwo\\x0d")
        XCTAssertEqual("said: \(UntrustedText("one\ntwo"))", "said: one\\x0atwo")
    }

    func testPlainTextIsUnchanged() {
        for text in ["alice@example.com", "Zoë 🙂 日本", ""] {
            XCTAssertEqual(TerminalText.escaped(text, keepingNewlines: false), text)
        }
    }

    func testJSONKeepsItsMeaningWithoutRawC1() throws {
        let json = Format.json(["name": "x\u{9b}y\u{1b}z\u{202e}"])
        XCTAssertFalse(json.unicodeScalars.contains { $0.value >= 0x7f })
        let decoded = try JSONDecoder().decode([String: String].self, from: Data(json.utf8))
        XCTAssertEqual(decoded["name"], "x\u{9b}y\u{1b}z\u{202e}")
    }

    func testWholeSecondsNeverTraps() {
        XCTAssertEqual(Format.wholeSeconds(3600.4), 3600)
        XCTAssertEqual(Format.wholeSeconds(1e300), 100 * 366 * 86400)
        XCTAssertEqual(Format.wholeSeconds(-.infinity), 0)
        XCTAssertEqual(Format.wholeSeconds(.nan), 0)
        XCTAssertEqual(Format.duration(1e300), "878400 hours")
    }
}

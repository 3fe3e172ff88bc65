import Foundation
import XCTest

@testable import CognitoClient

/// CognitoClient uses FoundationEssentials only (docs/performance.md), so a few things the full
/// Foundation did are written out by hand. Each is compared here with the full Foundation's own
/// answer on the same samples.
final class FoundationEssentialsTests: XCTestCase {
    private let texts = ["", " ", "a", " a ", "\ta b\t", "\n a\r\n", "\u{00A0}x\u{2003}", "[::1]", "a\nb", "  \n  "]

    func testTrimmingMatchesFoundation() {
        for text in texts {
            XCTAssertEqual(text.trimmed(), text.trimmingCharacters(in: .whitespacesAndNewlines), text.debugDescription)
            XCTAssertEqual(text.trimmedBlanks(), text.trimmingCharacters(in: .whitespaces), text.debugDescription)
        }
        XCTAssertEqual(
            "[::1]".trimmed(where: { $0 == "[" || $0 == "]" }),
            "[::1]".trimmingCharacters(in: CharacterSet(charactersIn: "[]")))
    }

    func testFormEscapingMatchesFoundation() {
        let unreserved = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        for text in ["", "abc", "a b+c&d=e", "ünïcødé €", "~-._", "%41", "/?#[]@!$&'()*,;", "\u{0}\u{7f}", "🔑"] {
            XCTAssertEqual(
                FormEncoding.escape(text), text.addingPercentEncoding(withAllowedCharacters: unreserved), text)
            XCTAssertEqual(FormEncoding.unescape(FormEncoding.escape(text)), text, text)
        }
        for encoded in ["abc", "%41%42", "%e2%82%ac", "%E2%82%AC", "%", "%4", "%zz", "%ff", "a%20b", "%C3%28"] {
            XCTAssertEqual(FormEncoding.unescape(encoded), encoded.removingPercentEncoding, encoded)
        }
        XCTAssertEqual(FormEncoding.decode("a=1+2&b=%26&a=3&=x&c"), ["a": "1 2", "b": "&", "c": ""])
    }

    func testJSONDocumentsAsJSONSerializationReadsThem() {
        for text in ["{}", "[]", #"{"a":[1,"x",null,true]}"#, "", "x", "1", #""s""#, "null", "{", #"{"a":}"#, " [ ] "] {
            let data = Data(text.utf8)
            XCTAssertEqual(
                JSONValue.document(data) != nil, (try? JSONSerialization.jsonObject(with: data)) != nil, text)
        }
        let document = JSONValue.document(Data(#"{"__type":"X#Y","message":"m","n":1}"#.utf8))
        XCTAssertEqual(document?["__type"]?.string, "X#Y")
        XCTAssertNil(document?["n"]?.string)
        XCTAssertNil(document?["missing"])
    }
}

import XCTest

@testable import AuthctlCore

final class AssuanTests: XCTestCase {
    /// Parses `line` as pinentry would send it (no line feed); a D line's data is returned decoded.
    private func parse(_ line: String) throws -> (Assuan.Reply, [UInt8]) {
        var decoded = [UInt8](repeating: 0, count: 64)
        let bytes = Array(line.utf8)
        let reply = try bytes.withUnsafeBytes { line in
            try decoded.withUnsafeMutableBytes { try Assuan.parse(line, decodingInto: $0) }
        }
        if case .data(let count) = reply { return (reply, Array(decoded.prefix(count))) }
        return (reply, [])
    }

    func testRepliesAsPinentrySendsThem() throws {
        let table: [(line: String, reply: Assuan.Reply, data: String)] = [
            ("OK", .ok, ""),
            ("OK Pleased to meet you", .ok, ""),
            ("D s3cret", .data(count: 6), "s3cret"),
            ("D 100%25 sure", .data(count: 9), "100% sure"),
            ("D two%0Alines%0D", .data(count: 10), "two\nlines\r"),
            ("D %e2%82%AC", .data(count: 3), "€"),
            ("D ", .data(count: 0), ""),
            (
                "ERR 83886179 Operation cancelled <Pinentry>",
                .error(code: 83_886_179, text: "Operation cancelled <Pinentry>"), ""
            ),
            ("ERR 83886278", .error(code: 83_886_278, text: ""), ""),
            ("S ERROR tty.? 83886278 ", .status, ""),
            ("# a comment", .status, ""),
            ("#", .status, ""),
            ("INQUIRE PINENTRY_LAUNCHED 1234", .inquire("PINENTRY_LAUNCHED"), ""),
            ("END", .end, ""),
        ]
        for row in table {
            let (reply, data) = try parse(row.line)
            XCTAssertEqual(reply, row.reply, row.line)
            XCTAssertEqual(String(decoding: data, as: UTF8.self), row.data, row.line)
        }
    }

    func testCancelsAreTheCodesWithoutTheirSource() {
        XCTAssertEqual(Assuan.code(83_886_179), Assuan.cancelled)
        XCTAssertEqual(Assuan.code(83_886_278), Assuan.fullyCancelled)
        XCTAssertEqual(Assuan.code(83_886_142), Assuan.timedOut)
    }

    func testWhatIsNotAssuanIsRefused() {
        for line in [
            "D 50%", "D 50%2", "D %zz", "D %%41", "ERR", "ERR cancelled", "HELLO", "",
            String(repeating: "x", count: Assuan.maximumLine),
            "D " + String(repeating: "a", count: 65),
        ] {
            XCTAssertThrowsError(try parse(line), line.count > 80 ? "a long line" : line)
        }
        // The longest line there may be (999 bytes and its line feed) is read.
        XCTAssertNoThrow(try parse("# " + String(repeating: "x", count: Assuan.maximumLine - 3)))
    }

    func testWhatAuthctlSendsIsEscapedAndFitsOneLine() {
        XCTAssertEqual(Assuan.command("SETDESC", "100% of\r\nit"), "SETDESC 100%25 of%0D%0Ait")
        XCTAssertEqual(Assuan.command("SETPROMPT", "Password:"), "SETPROMPT Password:")
        let long = Assuan.command("SETDESC", String(repeating: "%", count: 600))
        XCTAssertLessThanOrEqual(long.utf8.count, Assuan.maximumLine - 1)
        XCTAssertTrue(long.hasSuffix("%25"), "a cut never splits an escape")
    }
}

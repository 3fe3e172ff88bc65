import CognitoClient
import Foundation
import XCTest

/// `HTTPDate`: the three forms of RFC 9110 §5.6.7 read by hand (Foundation's DateFormatter leaked
/// under the fuzzer), and everything else refused.
final class HTTPDateTests: XCTestCase {
    /// 2026-11-23: an RFC 850 two-digit year up to 76 is this century, from 77 the last one.
    private let now = Date(timeIntervalSince1970: 1_795_400_000)

    func testTheThreeFormsAndEdgeDates() {
        let table: [(String, TimeInterval, UInt)] = [
            ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777, #line),
            ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777, #line),
            ("Sun Nov  6 08:49:37 1994", 784_111_777, #line),
            ("Wed Nov 16 08:49:37 1994", 784_975_777, #line),
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0, #line),
            ("Wed, 31 Dec 1969 23:59:59 GMT", -1, #line),
            ("Tue, 29 Feb 2000 00:00:00 GMT", 951_782_400, #line),
            ("Tue, 29 Feb 2028 12:00:00 GMT", 1_835_438_400, #line),
            ("Sat, 31 Dec 2005 23:59:60 GMT", 1_136_073_600, #line),
            ("Fri, 31 Dec 9999 23:59:59 GMT", 253_402_300_799, #line),
            ("Mon, 01 Jan 0001 00:00:00 GMT", -62_135_596_800, #line),
            ("Wednesday, 01-Jan-76 00:00:00 GMT", 3_345_062_400, #line),
            ("Saturday, 01-Jan-77 00:00:00 GMT", 220_924_800, #line),
        ]
        for (text, expected, line) in table {
            XCTAssertEqual(HTTPDate.parse(text, now: now)?.timeIntervalSince1970, expected, text, line: line)
        }
    }

    func testWrongDatesAndOtherFormsAreRefused() {
        let wrong = [
            "Mon, 06 Nov 1994 08:49:37 GMT",  // 6 Nov 1994 was a Sunday
            "Sun, 31 Nov 1994 08:49:37 GMT",  // November has 30 days
            "Mon, 29 Feb 2100 00:00:00 GMT",  // 2100 is no leap year
            "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994 08:60:37 GMT",
            "Sun, 06 Nov 1994 08:49:61 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "sun, 06 nov 1994 08:49:37 GMT",  // names are case-sensitive
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 06 Nov 1994 08:49:37 +0000",
            "Sun, 6 Nov 1994 08:49:37 GMT",  // IMF-fixdate pads the day with a zero
            "Sun,  06 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT ",
            "Sun, 06 Nov 1994 08:49:37 GMT\u{0}",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun, 06-Nov-94 08:49:37 GMT",  // RFC 850 spells the day out
            "Sun Nov 06 08:49:37 1994",  // asctime pads the day with a space
            "Sun Nov  6 08:49:37 1994 GMT",
            "Sun Nov 6 08:49:37 1994",
            "1994-11-06T08:49:37Z",
            "Sun, 06 Nov 1994 0８:49:37 GMT",  // a full-width digit
            "",
            "GMT",
        ]
        for text in wrong {
            XCTAssertNil(HTTPDate.parse(text, now: now), "accepted \(text.debugDescription)")
        }
    }

    func testRetryAfterReadsEveryForm() {
        let base = Date(timeIntervalSince1970: 784_111_777 - 4)
        XCTAssertEqual(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:37 GMT", now: base), 4)
        XCTAssertEqual(RetryAfter.seconds(" Sun Nov  6 08:49:37 1994 ", now: base), 4)
        XCTAssertEqual(RetryAfter.seconds("Sunday, 06-Nov-94 08:49:37 GMT", now: base), 4)
        XCTAssertEqual(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:30 GMT", now: base), 0, "a date past is no wait")
        XCTAssertNil(RetryAfter.seconds("Mon, 06 Nov 1994 08:49:37 GMT", now: base))
        XCTAssertEqual(RetryAfter.seconds("2", now: base), 2)
    }
}

/// `ResponseHeaders`: the transport's reading of the header lines libcurl hands it.
final class ResponseHeadersTests: XCTestCase {
    private func parse(_ lines: [String]) -> ResponseHeaders {
        var head = ResponseHeaders()
        for line in lines {
            XCTAssertTrue(Array(line.utf8).withUnsafeBytes { head.add(line: $0) })
        }
        return head
    }

    func testOnlyTheFinalResponsesHeadersAreKeptLowerCasedLastValueWins() {
        let head = parse([
            "HTTP/1.1 100 Continue\r\n", "X-Interim: yes\r\n", "\r\n",
            "HTTP/1.1 400 Bad Request\r\n", "X-Amzn-ErrorType:  TooManyRequestsException: \r\n",
            "Retry-After: 1\r\n", "retry-after: 2\r\n", "no colon here\r\n", ": no name\r\n", "\r\n",
        ])
        XCTAssertEqual(head.fields, ["x-amzn-errortype": "TooManyRequestsException:", "retry-after": "2"])
    }

    func testTheHeaderSectionIsCapped() {
        var head = ResponseHeaders()
        let line = Array(("x-filler: " + String(repeating: "a", count: 1_000) + "\r\n").utf8)
        var accepted = 0
        while line.withUnsafeBytes({ head.add(line: $0) }) { accepted += 1 }
        XCTAssertTrue(head.overflow)
        XCTAssertEqual(accepted, ResponseHeaders.maxBytes / line.count)
    }
}

import CognitoClient
import Foundation
import Glibc
import LocalFormats
import XCTest

@testable import AuthctlCore
@testable import authctl

/// The executable uses FoundationEssentials only (docs/performance.md): what it took from the full
/// Foundation is written out in Support/Essentials.swift and Output.swift. Each is compared here
/// with the full Foundation's own answer, which the tests may still use.
final class EssentialsTests: XCTestCase {
    func testParentDirectoryAsNSString() {
        // Not "a" or "a/": Foundation 6.3's NSString traps on them; nor "//", where it answers "".
        for path in [
            "/a/b", "/a/b/", "/a", "/", "a/b", "", "//a//b//", "/home/u/.config/authctl/config.toml", "./x", "../",
            "/x//authctl/config.toml", "a//b/c", "///a", "/a/./b", "/a//", "//a", "ab/",
        ] {
            XCTAssertEqual(Paths.parent(of: path), (path as NSString).deletingLastPathComponent, path)
        }
    }

    func testHomeDirectoryAsNSHomeDirectory() {
        XCTAssertEqual(Paths.home(["HOME": "/elsewhere"]), "/elsewhere")
        XCTAssertEqual(Paths.home([:]), NSHomeDirectory())
    }

    func testOneDecimalAsStringFormat() {
        for value in [0, 0.05, 0.15, 0.25, 2.25, 2.35, 19.95, 19.94, 1e6 + 0.05, -0.05, -1.25, 1234567.89, .pi, 1e-9] {
            XCTAssertEqual(Numbers.oneDecimal(value), String(format: "%.1f", value), "\(value)")
        }
        XCTAssertEqual(BulkRunFlow.number(2.5), "2.5")
        XCTAssertEqual(BulkRunFlow.number(25), "25")
    }

    func testISO8601AsISO8601DateFormatter() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        for seconds in [0, -0.5, 1_795_000_000.75, 1e10 + 0.999, -62_135_596_800, 253_402_300_799.9, 951_782_400] {
            let date = Date(timeIntervalSince1970: seconds)
            XCTAssertEqual(Format.iso8601(date), formatter.string(from: date), "\(seconds)")
        }
    }

    func testJSONDatesAsBefore() throws {
        struct Stamp: Encodable { var at: Date }
        let text = Format.json(Stamp(at: Date(timeIntervalSince1970: 1_795_000_000.75)))
        XCTAssertEqual(text, #"{"at":"2026-11-18T11:06:40Z"}"#)
    }

    /// Local time comes from libc with the zone database's abbreviation (ICU's names, e.g.
    /// `GMT+1` for Berlin, need ICU's data): the wall-clock part is the same as DateFormatter's.
    func testLocalTimeUsesTheZoneOfTZ() {
        let saved = getenv("TZ").map { String(cString: $0) }
        defer {
            if let saved { setenv("TZ", saved, 1) } else { unsetenv("TZ") }
            tzset()
        }
        let date = Date(timeIntervalSince1970: 1_795_000_000.75)
        for (zone, expected) in [
            ("UTC", "2026-11-18 11:06:40 UTC"), ("Europe/Berlin", "2026-11-18 12:06:40 CET"),
            ("America/New_York", "2026-11-18 06:06:40 EST"), ("Pacific/Kiritimati", "2026-11-19 01:06:40 +14"),
        ] {
            setenv("TZ", zone, 1)
            tzset()
            XCTAssertEqual(Format.localTime(date), expected, zone)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: zone)
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
            XCTAssertTrue(Format.localTime(date).hasPrefix(formatter.string(from: date) + " "), zone)
        }
    }

    /// Dates from outside (a JWT's exp, an AWS answer) may be absurd: no trap. Just past years 1
    /// and 9999 the text is ICU's; for the absurd ones ICU and FoundationEssentials each write a
    /// different meaningless year, so only "no crash" is checked there.
    func testDurationsAreSaidExactly() {
        // `unlock --idle 8s` once said "0 min".
        let cases: [(UInt64, String)] = [
            (0, "0 s"), (8, "8 s"), (60, "1 min"), (90, "1 min 30 s"), (900, "15 min"), (5400, "1 h 30 min"),
            (28_800, "8 h"), (172_800, "2 d"), (90_061, "1 d 1 h 1 min 1 s"),
        ]
        for (seconds, said) in cases { XCTAssertEqual(Format.duration(seconds: seconds), said, "\(seconds)") }
    }

    func testDatesOutsideTheCalendarAreNoCrash() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        for seconds: Double in [253_402_300_800, -62_135_596_801] {
            let date = Date(timeIntervalSince1970: seconds)
            XCTAssertEqual(Format.iso8601(date), formatter.string(from: date), "\(seconds)")
        }
        for seconds in [1e300, -1e300, Double.nan, .infinity, 253_402_300_800, -62_135_596_801] {
            let date = Date(timeIntervalSince1970: seconds)
            XCTAssertFalse(Format.localTime(date).isEmpty, "\(seconds)")
            XCTAssertFalse(Format.iso8601(date).isEmpty, "\(seconds)")
        }
    }

    func testPercentEncodingAsAddingPercentEncoding() {
        var alphanumerics = CharacterSet.alphanumerics
        alphanumerics.insert(charactersIn: "-._~")
        let samples = [
            "", "alice", "a b+c&d=e", "ünïcødé €", "~-._", "%41", "/?#[]@!$&'()*,;:", "\u{0}\u{7f}", "🔑",
            "Ⅻ½٣", "e\u{301}", "日本語", "http://127.0.0.1:5000/eu-west-1_abc/.well-known/jwks.json",
        ]
        for text in samples {
            XCTAssertEqual(
                PercentEncoding.encode(text, keeping: PercentEncoding.isUnreserved),
                text.addingPercentEncoding(withAllowedCharacters: alphanumerics), text)
            let jwksName = CharacterSet(
                charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
            XCTAssertEqual(
                PercentEncoding.encode(
                    text, keeping: { PercentEncoding.isASCIIAlphanumeric($0) || "-_.".unicodeScalars.contains($0) }),
                text.addingPercentEncoding(withAllowedCharacters: jwksName), text)
        }
        XCTAssertEqual(
            AuthenticatorURI.otpauth(secret: "S", username: "jö é@x", issuer: "My Pool"),
            "otpauth://totp/My%20Pool:j%C3%B6%20%C3%A9%40x?secret=S&issuer=My%20Pool")
    }

    func testShellWordsAsBefore() {
        XCTAssertEqual(ShellWord.quoted("alice@example.com"), "alice@example.com")
        XCTAssertEqual(ShellWord.quoted("ünï"), "'ünï'")
        XCTAssertEqual(ShellWord.quoted("it's"), "'it'\\''s'")
        XCTAssertEqual(ShellWord.exactlyQuoted("a'b'"), "'a'\\''b'\\'''")
    }

    func testReadableFileReadsFromAnOffset() throws {
        let path = NSTemporaryDirectory() + "/essentials-\(getpid()).txt"
        defer { unlink(path) }
        try Data("0123456789".utf8).write(to: URL(fileURLWithPath: path))
        let file = try XCTUnwrap(ReadableFile(path: path))
        XCTAssertTrue(file.seek(to: 4))
        XCTAssertEqual(file.readToEnd(limit: 100), Data("456789".utf8))
        XCTAssertEqual(file.read(upTo: 10), Data())
        XCTAssertTrue(file.seek(to: 0))
        XCTAssertNil(file.readToEnd(limit: 5), "longer than the limit")
        XCTAssertNil(ReadableFile(path: path + ".missing"))
    }

    func testThreadsRunSideBySide() {
        // Two threads that each wait for the other: only passes if both run at once.
        let lock = Lock()
        var arrived = 0
        let group = DispatchGroup()
        for _ in 0..<2 {
            group.enter()
            Threads.start(stackSize: 1 << 20) {
                lock.withLock { arrived += 1 }
                let deadline = Date().addingTimeInterval(10)
                while lock.withLock({ arrived }) < 2 && Date() < deadline { usleep(1000) }
                group.leave()
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 20), .success)
        XCTAssertEqual(lock.withLock { arrived }, 2)
    }

    func testFileSystemErrorsNameTheReason() {
        do {
            try FileManager.default.createDirectory(atPath: "/dev/null/x", withIntermediateDirectories: true)
            XCTFail("created a directory under /dev/null")
        } catch {
            XCTAssertEqual(ErrorText.reason(error), "Not a directory")
        }
    }
}

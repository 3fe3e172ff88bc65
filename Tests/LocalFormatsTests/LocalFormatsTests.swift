import CognitoClient
import Foundation
import LocalFormats
import XCTest

/// config.toml's text: what is read, what is refused, and that what is written reads back.
final class ConfigDocumentTests: XCTestCase {
    func testProfilesAreReadAndUnknownKeysIgnored() throws {
        let profiles = try ConfigDocument.parse(
            """
            [profiles.default]
            user_pool_id = "eu-west-1_AbC"
            client_id = "abc"
            redirect_port = 8400
            colour = "blue"

            [profiles."with space"]
            endpoint = "http://127.0.0.1:5000/"
            """)
        XCTAssertEqual(
            profiles,
            [
                "default": ProfileConfig(userPoolId: "eu-west-1_AbC", clientId: "abc", redirectPort: "8400"),
                "with space": ProfileConfig(endpoint: "http://127.0.0.1:5000/"),
            ])
        XCTAssertEqual(try ConfigDocument.parse("# nothing\n"), [:])
    }

    func testWrongShapesAreTypedErrors() {
        XCTAssertThrowsError(try ConfigDocument.parse("[profiles.a]\nclient_id = \"x\"\n[profiles.a\n")) { error in
            guard case ConfigDocumentError.notTOML(_, let line) = error else { return XCTFail("\(error)") }
            XCTAssertEqual(line, 3)
        }
        XCTAssertThrowsError(try ConfigDocument.parse("[profiles]\na = 1\n")) {
            XCTAssertEqual($0 as? ConfigDocumentError, .profileNotATable(profile: "a"))
        }
        XCTAssertThrowsError(try ConfigDocument.parse("[profiles.a]\nclient_id = 7\n")) {
            XCTAssertEqual($0 as? ConfigDocumentError, .notAString(profile: "a", key: "client_id"))
        }
    }

    /// Found by fuzzing: TOMLKit's parser asserted (abort; undefined behaviour in a release build)
    /// on a table name that does not start with a key, and on an array closed by `}`. Refused
    /// first, with the line.
    func testATableNameThatIsNoKeyIsRefusedNotACrash() {
        for (text, line) in [
            ("[#a]\n", 1), ("[profiles.a]\nclient_id = \"x\"\n\n[ .a]\n", 4), ("[\u{7}a]", 1),
            ("[[=a]]\n", 1), ("x = 1\n[\u{2028}a]\n", 2), ("a = \"\"\"\nx\n\"\"\"\n[ü]\n", 4),
            ("x = [}\n", 1), ("a = [\n  {b = 1]\n", 2),
        ] {
            XCTAssertThrowsError(try ConfigDocument.parse(text), text.debugDescription) { error in
                guard case ConfigDocumentError.notTOML(_, let got) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(got, line, text.debugDescription)
            }
        }
    }

    /// A 300 KB table name of dots (or a dotted key, or values nested that
    /// deep) overflowed the stack in TOMLKit's parser, which recurses once per level: refused first,
    /// with the line; ordinary dotted keys, floats and nesting still read.
    func testDeepKeysAndNestingAreRefusedNotACrash() throws {
        let deep = String(repeating: "a.", count: 150_000) + "a"
        for (text, line) in [
            ("[profiles.x]\nregion = \"r\"\n[\(deep)]\n", 3), ("\(deep) = 1\n", 1),
            ("x = { \(deep) = 1 }\n", 1), ("x = " + String(repeating: "[", count: 100_000) + "\n", 1),
            ("x = " + String(repeating: "{a=", count: 100_000) + "\n", 1),
        ] {
            XCTAssertThrowsError(try ConfigDocument.parse(text)) { error in
                guard case ConfigDocumentError.notTOML(_, let got) = error else { return XCTFail("\(error)") }
                XCTAssertEqual(got, line)
            }
        }
        XCTAssertThrowsError(try ConfigDocument.parse("# " + String(repeating: "x", count: 1024 * 1024) + "\n"))
        let fine = try ConfigDocument.parse(
            """
            [profiles.default]
            region = "eu-west-1"
            a.b.c = 1.5
            d = [1.0, 2.5, { e.f = 3.25 }, [[4.0]]]
            """)
        XCTAssertEqual(fine["default"]?.region, "eu-west-1")
    }

    /// Brackets that are no table header (in arrays, strings, comments) are left to the parser.
    func testBracketsInValuesStringsAndCommentsAreNoHeaders() throws {
        let text = #"""
            a = [
              [+1, 2],
              [ # a comment [#x]
                3 ],
            ]
            t = { k = "]" }
            b = """
            [#not a header] \""""
            c = '''
            [.neither]'''
            [profiles.p]   # comment [
            client_id = "x"
            [[arr]]
            [ "quoted key" ]
            """#
        XCTAssertEqual(try ConfigDocument.parse(text), ["p": ProfileConfig(clientId: "x")])
    }

    func testWhatIsWrittenReadsBack() throws {
        let profiles = [
            "default": ProfileConfig(
                userPoolId: "eu-west-1_AbC", clientId: "abc", region: "eu-west-1",
                endpoint: "https://x/", username: "a\"b\\c\nd", identityPoolId: "eu-west-1:1",
                domain: "https://d", redirectPort: "8400"),
            "odd name.with=chars": ProfileConfig(clientId: "é\u{1}\u{7F}\t\r"),
            // Found by fuzzing: TOMLKit's writer made this a ''' string that its own quotes ended.
            "quotes": ProfileConfig(username: "a'''\nb\"\"\"c'", domain: "'''"),
        ]
        let text = ConfigDocument.render(profiles)
        XCTAssertTrue(text.hasPrefix("# authctl profiles: written by `authctl configure`."))
        XCTAssertEqual(try ConfigDocument.parse(text), profiles)
    }

    /// `unlock_after_prompt` may be a TOML boolean (or a string, checked by the CLI); written back
    /// as a boolean when it is one. Any other key still must be a string.
    func testABooleanSettingReadsAsTextAndIsWrittenBackAsABoolean() throws {
        let read = try ConfigDocument.parse(
            "[profiles.a]\nunlock_after_prompt = false\n[profiles.b]\nunlock_after_prompt = \"sometimes\"\n")
        XCTAssertEqual(read["a"]?.unlockAfterPrompt, "false")
        XCTAssertEqual(read["b"]?.unlockAfterPrompt, "sometimes")
        let text = ConfigDocument.render(read)
        XCTAssertTrue(text.contains("unlock_after_prompt = false\n"), text)
        XCTAssertTrue(text.contains("unlock_after_prompt = \"sometimes\"\n"), text)
        XCTAssertEqual(try ConfigDocument.parse(text), read)
        XCTAssertThrowsError(try ConfigDocument.parse("[profiles.a]\nunlock_after_prompt = 1\n")) {
            XCTAssertEqual($0 as? ConfigDocumentError, .notAString(profile: "a", key: "unlock_after_prompt"))
        }
        XCTAssertThrowsError(try ConfigDocument.parse("[profiles.a]\nregion = true\n")) {
            XCTAssertEqual($0 as? ConfigDocumentError, .notAString(profile: "a", key: "region"))
        }
    }
}

/// The Secret Service records: the JSON kept by earlier versions still reads, and what is
/// written reads back.
final class StoredRecordTests: XCTestCase {
    private func jwt(_ claims: [String: Any]) -> String {
        func part(_ object: [String: Any]) -> String {
            try! JSONSerialization.data(withJSONObject: object).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return part(["alg": "RS256"]) + "." + part(claims) + ".c2ln"
    }

    /// A session item as the executable wrote it before the type moved to LocalFormats.
    func testASessionKeptByEarlierVersionsReads() throws {
        let json =
            #"{"accessToken":"a","accessTokenExpiresAt":"2026-11-23T19:00:00Z","clientId":"c","endpoint":"https:\/\/e\/","idToken":"i","issuedAt":"2026-11-23T18:00:00Z","profile":"default","refreshToken":"r","region":"eu-west-1","sub":"s","userPoolId":"eu-west-1_P","username":"alice","version":1}"#
        let session = try StoredSession.decoder.decode(StoredSession.self, from: Data(json.utf8))
        XCTAssertEqual(session.username, "alice")
        XCTAssertEqual(session.accessTokenExpiresAt, Date(timeIntervalSince1970: 1_795_460_400))
        XCTAssertNil(session.domain)
        XCTAssertEqual(String(decoding: try StoredSession.encoder.encode(session), as: UTF8.self), json)
        XCTAssertThrowsError(
            try StoredSession.decoder.decode(
                StoredSession.self, from: Data(json.replacingOccurrences(of: "19:00:00Z", with: "soon").utf8)))
    }

    func testASessionFromTokens() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let access = jwt(["username": "alice", "sub": "s-1", "exp": 1_800_000_600])
        var session = try StoredSession(
            tokens: AuthenticationResult(
                accessToken: access, expiresIn: 3600, tokenType: "Bearer", refreshToken: "r",
                idToken: jwt(["email": "Alice@Example.com"])),
            fallbackUsername: "typed", profile: "p", userPoolId: "eu-west-1_P", clientId: "c",
            region: "eu-west-1", endpoint: "https://e/", now: now)
        XCTAssertEqual(session.username, "alice")
        XCTAssertEqual(
            session.accessTokenExpiresAt, Date(timeIntervalSince1970: 1_800_000_600), "the token's exp is earlier")
        XCTAssertTrue(session.isSignedIn(as: "alice@example.com"))
        XCTAssertFalse(session.isSignedIn(as: "bob"))
        try session.apply(
            refreshed: AuthenticationResult(
                accessToken: jwt(["username": "alice"]), expiresIn: 60, tokenType: nil,
                refreshToken: nil, idToken: nil), now: now)
        XCTAssertEqual(session.refreshToken, "r", "kept when not rotated")
        XCTAssertEqual(session.accessTokenExpiresAt, now.addingTimeInterval(60))
        XCTAssertThrowsError(
            try StoredSession(
                tokens: AuthenticationResult(
                    accessToken: access, expiresIn: nil, tokenType: nil, refreshToken: nil, idToken: nil),
                fallbackUsername: "", profile: "p",
                userPoolId: "u", clientId: "c", region: "r", endpoint: "e", now: now)
        ) {
            XCTAssertEqual($0 as? StoredSession.Failure, .noRefreshToken)
        }
    }

    /// Found by fuzzing (`Fuzz/corpus/stored-session/regression-fractional-exp`): dates with a
    /// fraction of a second (the clock, a token's `exp`) were kept in memory and lost on write.
    func testASessionReadsBackAsItWasStored() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000.75)
        var session = try StoredSession(
            tokens: AuthenticationResult(
                accessToken: jwt(["username": "alice", "exp": 1_800_000_600.5]),
                expiresIn: 3600, tokenType: nil, refreshToken: "r", idToken: nil),
            fallbackUsername: "", profile: "p", userPoolId: "u", clientId: "c", region: "r",
            endpoint: "e", now: now)
        XCTAssertEqual(
            session.accessTokenExpiresAt, Date(timeIntervalSince1970: 1_800_000_600), "rounded down, never later")
        func readBack() throws -> StoredSession {
            try StoredSession.decoder.decode(StoredSession.self, from: StoredSession.encoder.encode(session))
        }
        XCTAssertEqual(try readBack(), session)
        try session.apply(
            refreshed: AuthenticationResult(
                accessToken: jwt(["username": "alice"]), expiresIn: 60, tokenType: nil,
                refreshToken: nil, idToken: nil), now: now)
        XCTAssertEqual(try readBack(), session)
    }

    func testAPendingChallengeKeptByEarlierVersionsReads() throws {
        let json =
            #"{"challengeName":"SMS_MFA","clientId":"c","destination":"+*******1234","expiresAt":"2026-11-23T18:03:00Z","session":"S","userPoolId":"eu-west-1_P","username":"u-1","verified":false,"wrongCodes":1}"#
        let pending = try StoredSession.decoder.decode(PendingChallenge.self, from: Data(json.utf8))
        XCTAssertEqual(pending.challengeName, .smsMFA)
        XCTAssertEqual(pending.displayName, "u-1")
        XCTAssertTrue(pending.isFor(username: "u-1"))
        XCTAssertFalse(pending.isExpired(now: Date(timeIntervalSince1970: 1_795_456_979)))
        XCTAssertTrue(pending.isExpired(now: Date(timeIntervalSince1970: 1_795_456_980)))
        XCTAssertEqual(String(decoding: try StoredSession.encoder.encode(pending), as: UTF8.self), json)
    }
}

/// The authenticator hand-out: a QR code too long to draw is a typed error, not a trap.
final class AuthenticatorHandoutTests: XCTestCase {
    func testTextTooLongForAQRCodeIsAnError() throws {
        XCTAssertThrowsError(try TerminalQRCode(encoding: String(repeating: "x", count: 3_000))) {
            XCTAssertTrue($0 is TerminalQRCode.Failure)
        }
        let code = try TerminalQRCode(
            encoding: AuthenticatorURI.otpauth(secret: "ABC", username: "ünï\u{1b}", issuer: "P"))
        XCTAssertEqual(code.modules.count, code.modules.first?.count)
    }
}

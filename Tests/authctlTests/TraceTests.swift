import CognitoClient
import Foundation
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import CognitoClient
@testable import authctl

/// `--debug`: events that cannot hold a secret, lines that are well formed, nothing when off.
final class TraceTests: XCTestCase {
    private let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Every string an event holds sits in one of the wrappers made for it (a name of a checked
    /// shape, a fixed word, an escaped setting): walking each case's payload finds no bare String.
    func testNoEventHoldsABareString() {
        let exchange = Exchange(
            operation: SafeName.operation(
                of: HTTPRequest(url: "https://h/", headers: [("X-Amz-Target", "S.InitiateAuth")])),
            host: SafeName.host(of: "https://cognito-idp.eu-west-1.amazonaws.com/"), status: 400,
            requestId: SafeName.requestId("6b86c39d-d470-441d-8289-85cabdb51f80"),
            errorCode: nil, failure: .timeout, seconds: 0.5)
        let retry = RetryDecision(
            operation: exchange.operation, attempt: 1, cause: .throttled, verdict: .retrying, wait: 0.2)
        let samples: [TraceEvent] = [
            .setting("region", .profile, .outside(TracedText(outside: "eu-west-1"))),
            .store(.file, .flag), .storeCheck(.kernelKeyring, usable: true),
            .service(.exchange(exchange)), .service(.retry(retry)),
            .cache(.awsCredentials, hit: true),
            .challenge(TracedText(outside: "SMS_MFA"), answerer: StaticWord("DeliveredCodeAnswerer")),
            .signIn(flow: StaticWord("PasswordSignInFlow"), .replica),
            .failover("refreshing", replicaRegion: TracedText(outside: "us-west-2")),
            .lock(.session, taken: true, waited: 0.1),
            .passphrase(from: StaticWord(PassphraseOrigin.file("/run/secrets/p").traceName)),
            .fileStore(.agent(.open, answer: .notHeld)), .fileStore(.agent(.seal, answer: nil)),
            .secretService(.read(direct: true, libsecretBecause: nil)),
            .secretService(.read(direct: false, libsecretBecause: .locked)),
        ]
        XCTAssertEqual(bareStrings(in: (name: "a secret", 1)), [".name"], "the walk finds a string")
        for event in samples {
            XCTAssertEqual(bareStrings(in: event), [], "\(event.name) holds a plain string")
            XCTAssertFalse(event.fields.isEmpty)
        }
    }

    private func bareStrings(in value: Any, path: String = "") -> [String] {
        switch value {
        case is String, is Substring: return [path]
        case is SafeName, is StaticWord, is TracedText, is StaticString: return []
        default:
            return Mirror(reflecting: value).children.flatMap {
                bareStrings(in: $0.value, path: path + "." + ($0.label ?? "?"))
            }
        }
    }

    /// A name is made only from its shape: a token, a session or a message is not one.
    func testSafeNamesRefuseWhatIsNotAName() throws {
        let jwt = "eyJraWQiOiJrMSIsImFsZyI6IlJTMjU2In0.eyJzdWIiOiJzdWItMSJ9.c2lnbmF0dXJl"
        XCTAssertNil(SafeName.requestId(jwt))
        XCTAssertNil(SafeName.requestId("id with a space"))
        XCTAssertEqual(SafeName.host(of: "https://user:pw@example.com:8443/x?q=1").text, "example.com")
        XCTAssertEqual(SafeName.host(of: "http://[::1]:9/").text, "[::1]")
        XCTAssertEqual(
            SafeName.operation(of: HTTPRequest(url: "https://d.example/oauth2/token?code=secret")).text, "/oauth2/token"
        )
        let refusal = HTTPResponse(
            status: 400, headers: [:],
            body: Data(#"{"__type":"NotAuthorizedException","message":"Incorrect username or password."}"#.utf8))
        XCTAssertEqual(SafeName.errorCode(of: refusal)?.text, "NotAuthorizedException")
        let odd = HTTPResponse(status: 400, headers: ["x-amzn-errortype": "Bad Type\u{1b}[2J:http://x"], body: Data())
        XCTAssertNil(SafeName.errorCode(of: odd))
    }

    func testTextAndJSONLines() throws {
        for format in TraceFormat.allCases {
            let console = FakeConsole()
            let trace = Trace(console: console, format: format)
            trace.record(.setting("username", .environment, .outside(TracedText(outside: "al\"ice\u{1b}[2J\n"))))
            let line = try XCTUnwrap(console.stderr.first)
            XCTAssertFalse(line.contains("\u{1b}") || line.contains("\n"), line)
            if format == .json {
                let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                XCTAssertEqual(Set(object.keys), ["t", "event", "fields"])
                XCTAssertEqual((object["fields"] as? [String: String])?["value"], "al\"ice\u{1b}[2J\n")
            } else {
                XCTAssertTrue(line.hasPrefix("authctl: debug +0.00"), line)
                XCTAssertTrue(
                    line.hasSuffix(#"setting name=username source=environment value="al\"ice\x1b[2J\x0a""#), line)
            }
        }
    }

    /// A refresh traced in JSON: its request and lock, none of the tokens; off, nothing.
    func testARefreshTraceHoldsNoTokenAndOffMeansNothing() throws {
        for debug in [["--debug=json"], []] {
            let harness = Harness(now: now)
            try harness.seedSession(expiresIn: 10, now: now)
            let issued = FakeCognito.tokens(expiresIn: 3600, now: now)
            harness.cognito.handlers["GetTokensFromRefreshToken"] = { _ in (200, issued) }
            try Token.parse(debug).run(in: harness.host)
            let lines = harness.console.stderr.filter { $0.hasPrefix("{\"t\":") }
            if debug.isEmpty {
                XCTAssertEqual(lines, [])
                continue
            }
            let events = try lines.map {
                try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
            }
            XCTAssertTrue(
                events.contains {
                    $0["event"] as? String == "request"
                        && ($0["fields"] as? [String: Any])?["operation"] as? String == "GetTokensFromRefreshToken"
                })
            XCTAssertTrue(events.contains { $0["event"] as? String == "lock-taken" })
            let result = try XCTUnwrap(issued["AuthenticationResult"] as? [String: Any])
            for token in [result["AccessToken"], result["IdToken"], "refresh-1"].compactMap({ $0 as? String }) {
                XCTAssertFalse(lines.joined().contains(token.prefix(12)), "a token in the trace")
            }
        }
    }

    func testTheEnvironmentTurnsItOnAndABadValueIsSaid() throws {
        XCTAssertEqual(try TraceFormat.fromEnvironment(["AUTHCTL_DEBUG": "1"]), .text)
        XCTAssertEqual(try TraceFormat.fromEnvironment(["AUTHCTL_DEBUG": "JSON"]), .json)
        XCTAssertNil(try TraceFormat.fromEnvironment(["AUTHCTL_DEBUG": "0"]))
        XCTAssertNil(try TraceFormat.fromEnvironment([:]))
        XCTAssertThrowsError(try TraceFormat.fromEnvironment(["AUTHCTL_DEBUG": "verbose"]))
        let console = FakeConsole()
        let host = ProcessHost(
            console: console, environment: ["AUTHCTL_DEBUG": "verbose"], makeTransport: { _ in FakeCognito() },
            makeStore: { InMemorySecretStore() })
        XCTAssertNil(CommandContext(host: host).trace)
        XCTAssertTrue(console.stderr.first?.contains("AUTHCTL_DEBUG") == true)
    }

    func testABareDebugIsTextAndMovesAfterTheSubcommand() {
        XCTAssertEqual(
            GlobalOptions.withDebugFormat(["--debug", "token", "--output", "json", "--", "cmd", "--debug"]),
            ["token", "--output", "json", "--debug=text", "--", "cmd", "--debug"])
        XCTAssertEqual(GlobalOptions.withDebugFormat(["exec", "--debug=json"]), ["exec", "--debug=json"])
    }
}

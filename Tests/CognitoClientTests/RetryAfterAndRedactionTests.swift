import Foundation
import Synchronization
import XCTest

@testable import CognitoClient

/// Retry-After is honoured (bounded), the time budget ends retries, and
/// a password echoed in another letter case is still redacted.
final class RetryAfterAndRedactionTests: XCTestCase {
    private final class Sleeps: Sendable {
        private let stored = Mutex<[Double]>([])
        var values: [Double] { stored.withLock { $0 } }
        func append(_ value: Double) { stored.withLock { $0.append(value) } }
    }

    private func throttled(retryAfter: String?) -> ScriptedTransport.Step {
        var headers = ["x-amzn-errortype": "TooManyRequestsException:", "content-type": "application/x-amz-json-1.1"]
        headers["retry-after"] = retryAfter
        return .respond(
            HTTPResponse(
                status: 400, headers: headers,
                body: Data(#"{"__type":"TooManyRequestsException","message":"Rate exceeded"}"#.utf8)))
    }

    private let ok = ScriptedTransport.Step.respond(HTTPResponse(status: 200, body: Data("{}".utf8)))

    private func call(_ steps: [ScriptedTransport.Step], budget: TimeBudget? = nil) -> (
        Sleeps, ScriptedTransport, Error?
    ) {
        let sleeps = Sleeps()
        var policy = RetryPolicy(sleep: { sleeps.append($0) }, random: { 0.5 })
        policy.budget = budget
        let transport = ScriptedTransport(steps)
        let service = CognitoService(endpoint: "https://cognito.example/", transport: transport, retryPolicy: policy)
        do {
            _ = try service.call("GetUser", ["AccessToken": "x"], idempotent: true, as: EmptyResponse.self)
            return (sleeps, transport, nil)
        } catch {
            return (sleeps, transport, error)
        }
    }

    func testRetryAfterInSecondsIsWaited() {
        let (sleeps, transport, error) = call([throttled(retryAfter: "3"), ok])
        XCTAssertNil(error)
        XCTAssertEqual(sleeps.values, [3])
        XCTAssertEqual(transport.requests.count, 2)
    }

    func testRetryAfterAsAnHTTPDateIsWaited() {
        let later = Date().addingTimeInterval(5)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let (sleeps, _, error) = call([throttled(retryAfter: formatter.string(from: later)), ok])
        XCTAssertNil(error)
        XCTAssertEqual(sleeps.values.count, 1)
        XCTAssertGreaterThan(sleeps.values[0], 3)
        XCTAssertLessThanOrEqual(sleeps.values[0], 5)
    }

    func testAnUnreasonableRetryAfterEndsTheRetries() {
        let (sleeps, transport, error) = call([throttled(retryAfter: "3600"), ok])
        XCTAssertEqual((error as? CognitoError)?.errorType, "TooManyRequestsException")
        XCTAssertEqual(sleeps.values, [])
        XCTAssertEqual(transport.requests.count, 1)
    }

    func testAMissingOrBrokenRetryAfterFallsBackToTheBackoff() {
        let (sleeps, _, error) = call([throttled(retryAfter: "soon"), throttled(retryAfter: nil), ok])
        XCTAssertNil(error)
        XCTAssertEqual(sleeps.values, [0.1, 0.2])  // full jitter at 0.5 over 0.2 s, 0.4 s
    }

    func testRetryAfterParsing() {
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        XCTAssertEqual(RetryAfter.seconds("120", now: now), 120)
        XCTAssertEqual(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:47 GMT", now: now), 10)
        XCTAssertEqual(RetryAfter.seconds("Sun, 06 Nov 1994 08:49:27 GMT", now: now), 0)
        XCTAssertEqual(RetryAfter.seconds("99999999999999999999999", now: now), 1e9)
        XCTAssertNil(RetryAfter.seconds("-5", now: now))
        XCTAssertNil(RetryAfter.seconds("1.5", now: now))
        XCTAssertNil(RetryAfter.seconds("", now: now))
    }

    func testNoRetryOnceTheBudgetIsSpent() {
        let budget = TimeBudget(seconds: 0.05)
        budget.spend { Thread.sleep(forTimeInterval: 0.06) }
        let (sleeps, transport, error) = call([throttled(retryAfter: nil), ok], budget: budget)
        XCTAssertNotNil(error)
        XCTAssertEqual(sleeps.values, [])
        XCTAssertEqual(transport.requests.count, 1)
    }

    func testAPasswordEchoedInAnotherCaseIsRedacted() {
        let request = HTTPRequest(
            url: "https://cognito.example/",
            body: Data(
                #"""
                {"AuthParameters":{"USERNAME":"alice","PASSWORD":"Correct-Horse-7"}}
                """#.utf8))
        let error = CognitoErrorParser.parse(
            HTTPResponse(
                status: 400, headers: ["x-amzn-errortype": "InvalidPasswordException:"],
                body: Data(
                    #"{"__type":"InvalidPasswordException","message":"CORRECT-HORSE-7 is weak; so is correct-horse-7"}"#
                        .utf8)),
            request: request)
        XCTAssertEqual(error.message, "[redacted] is weak; so is [redacted]")
    }
}

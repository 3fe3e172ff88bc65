import CognitoClient
import Foundation
import XCTest

final class DeferredTransportTests: XCTestCase {
    func testMakesNothingUntilTheFirstRequestThenOnce() throws {
        var made = 0
        let inner = ScriptedTransport([.respond(HTTPResponse(status: 200)), .respond(HTTPResponse(status: 204))])
        let transport = DeferredTransport {
            made += 1
            return inner
        }
        XCTAssertEqual(made, 0)
        XCTAssertFalse(transport.isMade)
        XCTAssertEqual(try transport.send(HTTPRequest(url: "http://127.0.0.1:9/")).status, 200)
        XCTAssertEqual(try transport.send(HTTPRequest(url: "http://127.0.0.1:9/")).status, 204)
        XCTAssertEqual(made, 1, "one transport for every request, so they share a connection")
        XCTAssertEqual(inner.requests.count, 2)
    }

    func testASetUpErrorIsThrownByTheRequest() {
        struct SetUpFailed: Error {}
        let transport = DeferredTransport { throw SetUpFailed() }
        XCTAssertThrowsError(try transport.send(HTTPRequest(url: "http://127.0.0.1:9/"))) { error in
            XCTAssertTrue(error is SetUpFailed, "\(error)")
        }
        XCTAssertFalse(transport.isMade)
    }
}

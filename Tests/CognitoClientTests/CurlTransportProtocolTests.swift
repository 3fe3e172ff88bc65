import Foundation
import XCTest

@testable import CognitoClient

/// The transport speaks https, and plain http only to this machine.
final class CurlTransportProtocolTests: XCTestCase {
    func testPlainHTTPToAnotherMachineIsRefusedBeforeAnyConnection() throws {
        let transport = try CurlTransport(options: TransportOptions(connectTimeout: 2, requestTimeout: 2))
        XCTAssertThrowsError(try transport.send(HTTPRequest(url: "http://192.0.2.1/", body: Data("{}".utf8)))) {
            error in
            let failure = error as? TransportError
            XCTAssertEqual(failure?.kind, .other, "\(error)")
            XCTAssertTrue(failure?.message.lowercased().contains("protocol") ?? false, "\(error)")
            XCTAssertEqual(failure?.requestMayHaveBeenSent, false)
        }
    }

    func testLoopbackHosts() {
        for host in ["localhost", "LOCALHOST", "a.localhost", "127.0.0.1", "127.9.8.7", "::1", "[::1]"] {
            XCTAssertTrue(Loopback.isLoopbackHost(host), host)
        }
        for host in ["localhost.example.com", "128.0.0.1", "127.0.0", "::2", "example.com", "1.127.0.0.1"] {
            XCTAssertFalse(Loopback.isLoopbackHost(host), host)
        }
        XCTAssertTrue(Loopback.isLoopbackURL("http://127.0.0.1:4566/"))
        XCTAssertFalse(Loopback.isLoopbackURL("http://evil.example/?x=127.0.0.1"))
    }
}

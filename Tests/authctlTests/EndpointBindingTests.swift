import XCTest

@testable import AuthctlCore
@testable import authctl

final class EndpointBindingTests: XCTestCase {
    func testTheSameEndpointWrittenDifferently() {
        XCTAssertTrue(
            ClientSettings.sameEndpoint(
                "https://cognito-idp.eu-west-1.amazonaws.com/",
                "HTTPS://Cognito-IDP.eu-west-1.amazonaws.com:443"))
        XCTAssertTrue(ClientSettings.sameEndpoint("http://127.0.0.1:9229", "http://127.0.0.1:9229/"))
    }

    func testAnotherEndpoint() {
        XCTAssertFalse(ClientSettings.sameEndpoint("http://127.0.0.1:9229/", "http://127.0.0.1:9230/"))
        XCTAssertFalse(
            ClientSettings.sameEndpoint(
                "https://cognito-idp.eu-west-1.amazonaws.com/",
                "http://cognito-idp.eu-west-1.amazonaws.com/"))
        XCTAssertFalse(
            ClientSettings.sameEndpoint(
                "https://cognito-idp.eu-west-1.amazonaws.com/",
                "https://cognito-idp.eu-west-1.amazonaws.com.evil.example/"))
        XCTAssertFalse(ClientSettings.sameEndpoint("http://127.0.0.1:9229/", "http://localhost:9229/"))
        XCTAssertFalse(ClientSettings.sameEndpoint("https://proxy.example/cognito/", "https://proxy.example/other/"))
    }
}

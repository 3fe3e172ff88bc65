import CognitoClient
import Foundation
import XCTest

/// The claims of tokens handed over by any flow are checked offline before
/// anything keeps them (the old code stored another pool's and client's tokens from a browser
/// sign-in, and took a refresh answering with another user's tokens).
final class IssuedTokensTests: XCTestCase {
    private let issuer = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Pool"

    private func access(_ change: [String: Any] = [:]) -> String {
        TestJWT.make(
            ["iss": issuer, "token_use": "access", "client_id": "client1", "sub": "sub-alice", "username": "alice"]
                .merging(change) { $1 })
    }

    private func id(_ change: [String: Any] = [:]) -> String {
        TestJWT.make(
            ["iss": issuer, "token_use": "id", "aud": "client1", "sub": "sub-alice", "cognito:username": "alice"]
                .merging(change) { $1 })
    }

    private func refused(
        _ accessToken: String, _ idToken: String?, previous: IssuedTokens.Holder? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(
            try IssuedTokens.check(
                accessToken: accessToken, idToken: idToken, issuer: issuer, clientId: "client1",
                previous: previous), file: file, line: line
        ) {
            XCTAssertEqual(($0 as? JWTError)?.code, .claimMismatch, "\($0)", file: file, line: line)
        }
    }

    func testThisPoolsClientsTokensPass() throws {
        try IssuedTokens.check(accessToken: access(), idToken: id(), issuer: issuer, clientId: "client1")
        try IssuedTokens.check(
            accessToken: access(), idToken: nil, issuer: issuer, clientId: "client1",
            previous: IssuedTokens.Holder(subject: "sub-alice", username: "alice"))
    }

    func testAnotherPoolClientOrUseIsRefused() {
        refused(access(["iss": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Other"]), id())
        refused(access(), id(["iss": "https://evil.example"]))
        refused(access(["client_id": "client2"]), id())
        refused(access(), id(["aud": "client2"]))
        refused(access(["token_use": "id"]), id())
        refused(id(), id())
        refused(access(), id(["sub": "sub-bob"]))
        refused(access(["iss": NSNull()]), nil)
    }

    func testARefreshForAnotherUserIsRefused() {
        let alice = IssuedTokens.Holder(subject: "sub-alice", username: "alice")
        refused(
            access(["sub": "sub-bob", "username": "bob"]), id(["sub": "sub-bob", "cognito:username": "bob"]),
            previous: alice)
        refused(access(["username": "bob"]), nil, previous: alice)
    }
}

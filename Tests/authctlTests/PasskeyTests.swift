import CognitoClient
import Foundation
import SecurityKey
import XCTest

@testable import AuthctlCore
@testable import authctl

/// `--method passkey` through the command and the WEB_AUTHN answerer, against the in-process fake
/// (the real key path runs in Tests/integration/test_passkeys.py against a software authenticator).
final class PasskeyTests: XCTestCase {
    /// The managed-login domain pins the profile's relying party (RelyingPartyPin).
    private let pinned = ["AUTHCTL_DOMAIN": "https://auth.example.com"]

    func testMethodPasskeyAsksForWebAuthnAndAnswersItWithTheKey() throws {
        let harness = Harness(console: FakeConsole(), environment: pinned)
        var preferred: String?
        harness.cognito.handlers["InitiateAuth"] = { body in
            preferred = (body["AuthParameters"] as? [String: String])?["PREFERRED_CHALLENGE"]
            return (
                200,
                [
                    "ChallengeName": "WEB_AUTHN", "Session": "s",
                    "ChallengeParameters": [
                        "USERNAME": "alice",
                        "CREDENTIAL_REQUEST_OPTIONS": #"{"challenge":"abc","rpId":"auth.example.com"}"#,
                    ],
                ]
            )
        }
        let missing = "unix:/nonexistent/authctl-test.sock"
        XCTAssertThrowsError(
            try SignIn.parse(["--username", "alice", "--method", "passkey", "--fido-device", missing])
                .run(in: harness.host)
        ) { error in
            let failure = AuthctlError.from(error)
            XCTAssertEqual(failure.code, .unavailable, failure.message)
            // The key named was reached for (a path that is not there is said so before opening).
            XCTAssertTrue(failure.message.contains("no such device: \(missing)"), failure.message)
        }
        XCTAssertEqual(preferred, "WEB_AUTHN")
    }

    func testWebAuthnAsASecondFactorGoesToTheSameAnswerer() throws {
        let harness = Harness(console: FakeConsole(stdin: ["pw"]), environment: pinned)
        harness.cognito.handlers["InitiateAuth"] = { _ in
            (
                200,
                [
                    "ChallengeName": "WEB_AUTHN", "Session": "s",
                    "ChallengeParameters": [
                        "USERNAME": "alice",
                        "CREDENTIAL_REQUEST_OPTIONS": #"{"challenge":"abc","rpId":"auth.example.com"}"#,
                    ],
                ]
            )
        }
        XCTAssertThrowsError(
            try SignIn.parse([
                "--username", "alice", "--flow", "password", "--password-stdin",
                "--fido-device", "unix:/nonexistent/authctl-test.sock",
            ])
            .run(in: harness.host)
        ) { error in
            XCTAssertTrue(AuthctlError.from(error).message.contains("no such device"), "\(error)")
        }
    }

    func testUnusableRequestOptionsAreTheServicesFault() throws {
        let harness = Harness(console: FakeConsole())
        harness.cognito.handlers["InitiateAuth"] = { _ in
            (200, ["ChallengeName": "WEB_AUTHN", "Session": "s", "ChallengeParameters": ["USERNAME": "alice"]])
        }
        XCTAssertThrowsError(try SignIn.parse(["--username", "alice", "--method", "passkey"]).run(in: harness.host)) {
            error in
            XCTAssertEqual(AuthctlError.from(error).code, .unavailable)
        }
    }

    func testPasswordOptionsAreRefusedWithPasskey() {
        XCTAssertThrowsError(try SignIn.parse(["--method", "passkey", "--password-stdin"]))
        XCTAssertThrowsError(try SignIn.parse(["--method", "passkey", "--pin-fd", "2"]))
    }

    func testNoKeyNamesTheUdevRuleAndTheBrowserOverSSH() {
        let local = SecurityKeyUse.noKey(unreadable: [], environment: [:])
        XCTAssertEqual(local.code, .unavailable)
        XCTAssertFalse(local.message.contains("udev"))
        XCTAssertTrue(local.message.contains("authctl signin --browser"))
        let remote = SecurityKeyUse.noKey(
            unreadable: ["/dev/hidraw3", "/dev/hidraw1"], environment: ["SSH_CONNECTION": "a b c d"])
        XCTAssertTrue(
            remote.message.contains("/dev/hidraw1, /dev/hidraw3 cannot be opened by this user"), remote.message)
        XCTAssertTrue(
            remote.message.contains(#"SUBSYSTEM=="hidraw""#) && remote.message.contains("over SSH"), remote.message)
    }

    func testAssertionAuthenticatorDataIsUnwrapped() {
        XCTAssertEqual(CBORByteString.unwrap([0x43, 1, 2, 3]), [1, 2, 3])
        XCTAssertEqual(CBORByteString.unwrap([0x58, 0x02, 7, 8]), [7, 8])
        XCTAssertEqual(CBORByteString.unwrap([0x59, 0x00, 0x01, 9]), [9])
        XCTAssertNil(CBORByteString.unwrap([0x63, 1, 2, 3]))  // a text string
        XCTAssertNil(CBORByteString.unwrap([0x43, 1, 2]))  // short
        XCTAssertNil(CBORByteString.unwrap([]))
    }
}

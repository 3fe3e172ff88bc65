import XCTest

@testable import CognitoClient

/// Expected values computed independently with Python's standard library:
///
///     python3 -c 'import hmac,hashlib,base64,sys; u,c,s=sys.argv[1:]; \
///       print(base64.b64encode(hmac.new(s.encode(),(u+c).encode(),hashlib.sha256).digest()).decode())' \
///       alice 1example23456789 secret123
final class SecretHashTests: XCTestCase {
    func testMatchesPythonHMAC() {
        XCTAssertEqual(
            SecretHash.compute(username: "alice", clientId: "1example23456789", clientSecret: "secret123"),
            "ZPWNNR8hNprrYD0cVewTv1CNnDuK6KgdJLAXQCHwsMQ=")
        XCTAssertEqual(
            SecretHash.compute(
                username: "test", clientId: "6pjljc0aqn0q6oqffm2p6r9dbh",
                clientSecret: "1t2v3o1ej8r3s0p5dl2j0n4q8b3a6i7dd9m0rfk0u3u4b5ukr9"),
            "HgCDpseRc0U5gBIOzSXOFBXj5bmxUk0XaQZXYh2pWJ0=")
    }

    func testNonASCIIIsUTF8() {
        XCTAssertEqual(
            SecretHash.compute(username: "j\u{F6}rg@example.com", clientId: "client", clientSecret: "s\u{E9}cret"),
            "XxTp44Nxv9SJoMsprbPd1tj2V9UT8H8z24xno4PRBb4=")
    }

    func testDependsOnEveryInput() {
        let base = SecretHash.compute(username: "alice", clientId: "client", clientSecret: "secret")
        XCTAssertNotEqual(base, SecretHash.compute(username: "bob", clientId: "client", clientSecret: "secret"))
        XCTAssertNotEqual(base, SecretHash.compute(username: "alice", clientId: "client2", clientSecret: "secret"))
        XCTAssertNotEqual(base, SecretHash.compute(username: "alice", clientId: "client", clientSecret: "secret2"))
    }
}

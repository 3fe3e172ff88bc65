import CognitoClient
import Foundation
import LocalFormats
import SecureStore
import XCTest

@testable import AuthctlCore
@testable import authctl

/// The loopback listener serves only this user's connections (the peer's uid
/// read from /proc/net/tcp*), and a sign-in that replaces another user's session says so.
final class BrowserPeerTests: XCTestCase {
    /// Rows as the kernel writes them: the peer's socket is the one whose local address is the
    /// connection's remote one and whose remote address is the connection's local one.
    func testThePeersRowGivesItsUid() {
        let table = """
              sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
               0: 0100007F:20D0 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 1 1 0 100 0 0 10 0
               1: 0100007F:B212 0100007F:20D0 01 00000000:00000000 00:00000000 00000000 65534        0 2 1 0 20 0 0 10 -1
               2: 0100007F:20D0 0100007F:B212 01 00000000:00000000 00:00000000 00000000  1000        0 3 1 0 20 0 0 10 -1
            """
        XCTAssertEqual(PeerCredentials.uid(in: table, peerLocal: "0100007F:B212", peerRemote: "0100007F:20D0"), 65534)
        XCTAssertNil(PeerCredentials.uid(in: table, peerLocal: "0100007F:B213", peerRemote: "0100007F:20D0"))
    }

    /// A real loopback connection from this process: its own uid.
    func testALoopbackConnectionFromThisUserIsThisUser() throws {
        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(server) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                XCTAssertEqual(bind(server, $0, length), 0)
                XCTAssertEqual(getsockname(server, $0, &length), 0)
            }
        }
        XCTAssertEqual(listen(server, 1), 0)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { XCTAssertEqual(connect(client, $0, length), 0) }
        }
        let accepted = accept(server, nil, nil)
        defer { close(accepted) }
        XCTAssertEqual(PeerCredentials.uid(ofPeerOf: accepted), getuid())
    }

    func testASignInReplacingAnotherUsersSessionSaysSo() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let harness = Harness(console: FakeConsole(stdin: ["pw"]), now: now)
        try harness.seedSession(expiresIn: 3600, now: now)
        harness.cognito.handlers["InitiateAuth"] = { _ in
            (200, FakeCognito.tokens(username: "bob", sub: "sub-bob", now: now))
        }
        harness.cognito.handlers["RevokeToken"] = { _ in (200, [:]) }
        try SignIn.parse(["--username", "bob", "--password-stdin", "--flow", "password"]).run(in: harness.host)
        XCTAssertTrue(
            harness.console.stderr.contains {
                $0.contains("was signed in as alice") && $0.contains("now signed in as bob")
            }, "\(harness.console.stderr)")
    }

    func testSigningInAgainAsTheSameUserSaysNothingOfIt() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let harness = Harness(console: FakeConsole(stdin: ["pw"]), now: now)
        try harness.seedSession(expiresIn: 3600, now: now)
        // A stored access token whose claims cannot be read: no subject to compare.
        var stored = try profileStore(harness.store).session()!
        stored.accessToken = "not-a-jwt"
        try save(in: harness.store, stored)
        harness.cognito.handlers["InitiateAuth"] = { _ in (200, FakeCognito.tokens(refresh: "refresh-2", now: now)) }
        harness.cognito.handlers["RevokeToken"] = { _ in (200, [:]) }
        try SignIn.parse(["--username", "alice", "--password-stdin", "--flow", "password"]).run(in: harness.host)
        XCTAssertFalse(harness.console.stderr.contains { $0.contains("was signed in as") }, "\(harness.console.stderr)")
    }
}

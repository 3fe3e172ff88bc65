import Foundation
import XCTest

@testable import SecureStore

/// systemd's socket activation as the key agent reads it: the variables (a table of what systemd,
/// a wrapper or a leaked environment may set) and the checks on the descriptor, on real sockets.
/// The agent run by the real `systemd-socket-activate` is in Tests/integration/test_agent.py.
final class SocketActivationTests: XCTestCase {
    typealias Refusal = SocketActivation.Refusal

    func testVariablesTable() {
        let pid: Int32 = 4242
        let cases: [(String, [String: String], Result<SocketActivation.Handover, Refusal>)] = [
            ("none set", [:], .success(.none)),
            ("names only", ["LISTEN_FDNAMES": "agent.sock"], .success(.none)),
            ("ours, one", ["LISTEN_PID": "4242", "LISTEN_FDS": "1"], .success(.listener(3))),
            (
                "ours, one, named",
                ["LISTEN_PID": "4242", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "authctl-agent.socket"],
                .success(.listener(3))
            ),
            (
                "another process's", ["LISTEN_PID": "1", "LISTEN_FDS": "1"],
                .failure(.otherProcess(listenPID: 1, pid: pid))
            ),
            ("two", ["LISTEN_PID": "4242", "LISTEN_FDS": "2"], .failure(.descriptorCount(2))),
            ("zero", ["LISTEN_PID": "4242", "LISTEN_FDS": "0"], .failure(.descriptorCount(0))),
            ("count without pid", ["LISTEN_FDS": "1"], .failure(.incomplete(missing: "LISTEN_PID"))),
            ("pid without count", ["LISTEN_PID": "4242"], .failure(.incomplete(missing: "LISTEN_FDS"))),
            ("pid zero", ["LISTEN_PID": "0", "LISTEN_FDS": "1"], .failure(.malformed(variable: "LISTEN_PID"))),
            ("pid signed", ["LISTEN_PID": "+4242", "LISTEN_FDS": "1"], .failure(.malformed(variable: "LISTEN_PID"))),
            ("pid spaced", ["LISTEN_PID": " 4242", "LISTEN_FDS": "1"], .failure(.malformed(variable: "LISTEN_PID"))),
            ("pid empty", ["LISTEN_PID": "", "LISTEN_FDS": "1"], .failure(.malformed(variable: "LISTEN_PID"))),
            (
                "pid past Int32", ["LISTEN_PID": "99999999999", "LISTEN_FDS": "1"],
                .failure(.malformed(variable: "LISTEN_PID"))
            ),
            ("pid in hex", ["LISTEN_PID": "0x1092", "LISTEN_FDS": "1"], .failure(.malformed(variable: "LISTEN_PID"))),
            (
                "count negative", ["LISTEN_PID": "4242", "LISTEN_FDS": "-1"],
                .failure(.malformed(variable: "LISTEN_FDS"))
            ),
            ("count words", ["LISTEN_PID": "4242", "LISTEN_FDS": "one"], .failure(.malformed(variable: "LISTEN_FDS"))),
        ]
        for (name, environment, expected) in cases {
            let got: Result<SocketActivation.Handover, Refusal>
            do {
                got = .success(try SocketActivation.handover(environment: environment, processID: pid))
            } catch let refusal as Refusal {
                got = .failure(refusal)
            } catch {
                XCTFail("\(name): \(error)")
                continue
            }
            XCTAssertEqual(got, expected, name)
        }
    }

    func testMessagesNeverRepeatAMalformedValue() {
        XCTAssertThrowsError(
            try SocketActivation.handover(environment: ["LISTEN_PID": "\u{1B}[2Jx", "LISTEN_FDS": "1"], processID: 7)
        ) { error in
            let message = (error as? Refusal)?.message ?? ""
            XCTAssertTrue(message.hasPrefix("LISTEN_PID is not a decimal number"), message)
            XCTAssertFalse(message.contains("\u{1B}"), message)
        }
    }

    func testThisProcessLosesTheVariablesWhateverTheOutcome() throws {
        setenv("LISTEN_PID", "1", 1)
        setenv("LISTEN_FDS", "1", 1)
        setenv("LISTEN_FDNAMES", "x", 1)
        XCTAssertThrowsError(try SocketActivation.handoverToThisProcess()) { error in
            XCTAssertEqual(error as? Refusal, .otherProcess(listenPID: 1, pid: getpid()))
        }
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { XCTAssertNil(getenv(name), name) }

        setenv("LISTEN_PID", String(getpid()), 1)
        setenv("LISTEN_FDS", "1", 1)
        XCTAssertEqual(try SocketActivation.handoverToThisProcess(), .listener(3))
        for name in ["LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"] { XCTAssertNil(getenv(name), name) }
        XCTAssertEqual(try SocketActivation.handoverToThisProcess(), SocketActivation.Handover.none)
    }

    // MARK: - The descriptor

    func testAListeningUnixStreamSocketAtThePathIsTakenAndMadeCloseOnExec() throws {
        let path = try temporaryDirectory() + "/agent.sock"
        let fd = try unixSocket(bound: path, listening: true)
        defer { close(fd) }
        XCTAssertEqual(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0, "systemd hands it over inheritable")
        try SocketActivation.checkListener(fd, path: path)
        XCTAssertEqual(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC)
    }

    func testEveryOtherDescriptorIsRefused() throws {
        let directory = try temporaryDirectory()
        let path = directory + "/agent.sock"
        let notListening = try unixSocket(bound: path, listening: false)
        let elsewhere = try unixSocket(bound: directory + "/other.sock", listening: true)
        let unbound = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let datagram = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        let tcp = try tcpListener()
        let file = open("/dev/null", O_RDONLY)
        var pair: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        let closed = dup(file)
        close(closed)
        defer { for fd in [notListening, elsewhere, unbound, datagram, tcp, file] + pair { close(fd) } }
        let cases: [(String, Int32, Refusal)] = [
            ("not listening", notListening, .notListening),
            ("another path", elsewhere, .otherPath(found: directory + "/other.sock", expected: path)),
            ("unbound", unbound, .notListening),
            ("datagram", datagram, .notStream),
            ("TCP", tcp, .notUnix),
            ("a file", file, .notASocket),
            ("a connected pair", pair[0], .notListening),
            ("closed", closed, .notOpen),
        ]
        for (name, fd, expected) in cases {
            XCTAssertThrowsError(try SocketActivation.checkListener(fd, path: path), name) { error in
                XCTAssertEqual(error as? Refusal, expected, name)
            }
        }
    }

    func testAnAbstractOrOddPathIsNamedEscaped() throws {
        XCTAssertEqual(SocketActivation.describe(Array("/run/a b\u{1B}".utf8)), "/run/a\\x20b\\x1b")
        let abstract = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(abstract) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name: [UInt8] = [0] + Array("authctl-test-\(getpid())".utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in name.enumerated() { raw[index] = byte }
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(abstract, $0, length) }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(abstract, 1), 0)
        XCTAssertThrowsError(try SocketActivation.checkListener(abstract, path: "/x/agent.sock")) { error in
            XCTAssertEqual(error as? Refusal, .otherPath(found: "an address with no path", expected: "/x/agent.sock"))
        }
    }

    // MARK: - Helpers

    private func temporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/authctl-activation-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        let path = String(cString: try XCTUnwrap(made))
        addTeardownBlock { try? FileManager.default.removeItem(atPath: path) }
        return path
    }

    private func unixSocket(bound path: String, listening: Bool) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = try AgentSocket.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        XCTAssertEqual(bound, 0, String(cString: strerror(errno)))
        if listening { XCTAssertEqual(listen(fd, 4), 0) }
        return fd
    }

    private func tcpListener() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertEqual(bound, 0)
        XCTAssertEqual(listen(fd, 4), 0)
        return fd
    }
}

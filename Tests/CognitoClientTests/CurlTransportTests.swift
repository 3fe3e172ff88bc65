import CognitoClient
import Foundation
import XCTest

/// CurlTransport against real local servers: a small Python 3 HTTP/1.1 server (optionally TLS with
/// a self-signed certificate made by the `openssl` CLI), started per test and killed in tearDown.
final class CurlTransportTests: XCTestCase {
    private var processes: [Process] = []
    private var tempDirectories: [URL] = []

    override func tearDown() {
        for process in processes where process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        processes.removeAll()
        for directory in tempDirectories {
            try? FileManager.default.removeItem(at: directory)
        }
        tempDirectories.removeAll()
        super.tearDown()
    }

    // MARK: - Requests and responses

    func testPostSendsBodyAndHeadersAndReturnsResponse() throws {
        let port = try startServer()
        let transport = try CurlTransport(options: TransportOptions(userAgent: "authctl/9.9.9-test"))
        var body = Data(#"{"AuthFlow":"USER_SRP_AUTH","Name":"Zoë"}"#.utf8)
        body.append(contentsOf: [0, 1, 2, 255])  // bytes after a NUL must survive: the size is explicit
        let response = try transport.send(
            HTTPRequest(
                url: "http://127.0.0.1:\(port)/echo",
                headers: [
                    (name: "Content-Type", value: "application/x-amz-json-1.1"),
                    (name: "X-Amz-Target", value: "AWSCognitoIdentityProviderService.InitiateAuth"),
                ],
                body: body))

        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(response.headers["x-custom-header"], "Hello World")
        XCTAssertEqual(response.headers["content-type"], "application/json")
        XCTAssertNil(response.headers["X-Custom-Header"], "header names must be lower-cased")

        let echo = try JSONDecoder().decode(Echo.self, from: response.body)
        XCTAssertEqual(echo.method, "POST")
        XCTAssertEqual(echo.path, "/echo")
        XCTAssertEqual(Data(base64Encoded: echo.body), body)
        XCTAssertEqual(echo.headers["content-type"], "application/x-amz-json-1.1")
        XCTAssertEqual(echo.headers["x-amz-target"], "AWSCognitoIdentityProviderService.InitiateAuth")
        XCTAssertEqual(echo.headers["user-agent"], "authctl/9.9.9-test")
        XCTAssertEqual(echo.headers["content-length"], String(body.count))
        XCTAssertNil(echo.headers["expect"], "no Expect: 100-continue")
    }

    func testGetRequest() throws {
        let port = try startServer()
        let transport = try CurlTransport(options: TransportOptions())
        let response = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/echo", method: "GET"))
        XCTAssertEqual(response.status, 200)
        let echo = try JSONDecoder().decode(Echo.self, from: response.body)
        XCTAssertEqual(echo.method, "GET")
        XCTAssertEqual(echo.body, "")
    }

    func testServerErrorIsReturnedNotThrown() throws {
        let port = try startServer()
        let transport = try CurlTransport(options: TransportOptions())
        let response = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/error", body: Data("{}".utf8)))
        XCTAssertEqual(response.status, 500)
        XCTAssertEqual(response.headers["x-amzn-errortype"], "InternalErrorException")
        XCTAssertEqual(String(decoding: response.body, as: UTF8.self), #"{"message":"boom"}"#)
    }

    func testInvalidHeaderValueIsRefusedBeforeSending() throws {
        let transport = try CurlTransport(options: TransportOptions())
        let request = HTTPRequest(
            url: "http://127.0.0.1:9/echo",
            headers: [(name: "X-Test", value: "secret\r\nInjected: yes")])
        XCTAssertThrowsError(try transport.send(request)) { error in
            let error = error as? TransportError
            XCTAssertEqual(error?.kind, .other)
            XCTAssertFalse(error?.message.contains("secret") ?? true, "header values must not leak into messages")
        }
    }

    // MARK: - Response cap

    func testBodyAtTheCapIsAccepted() throws {
        let port = try startServer()
        let transport = try CurlTransport(options: TransportOptions(maxResponseBytes: 1000))
        let response = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/big/1000", method: "GET"))
        XCTAssertEqual(response.body.count, 1000)
    }

    func testBodyOverTheCapWithContentLengthIsRefused() throws {
        let port = try startServer()
        let transport = try CurlTransport(options: TransportOptions(maxResponseBytes: 1000))
        assertTransportError(.responseTooLarge, containing: "1000 bytes") {
            _ = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/big/5000", method: "GET"))
        }
    }

    func testStreamedBodyOverTheCapIsRefused() throws {
        let port = try startServer()
        let transport = try CurlTransport(options: TransportOptions(maxResponseBytes: 1024))
        assertTransportError(.responseTooLarge, containing: "1 KiB") {
            // No Content-Length: the body runs to the end of the connection, so only the write
            // callback can stop it.
            _ = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/bigstream/200000", method: "GET"))
        }
    }

    // MARK: - Failures below HTTP

    func testStalledServerTimesOut() throws {
        let port = try startServer()
        let transport = try CurlTransport(options: TransportOptions(requestTimeout: 1))
        let start = Date()
        assertTransportError(.timeout, containing: "127.0.0.1", sent: true) {
            _ = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/stall", body: Data("{}".utf8)))
        }
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertGreaterThan(elapsed, 0.9)
        XCTAssertLessThan(elapsed, 4)
    }

    func testConnectionRefused() throws {
        let port = try closedPort()
        let transport = try CurlTransport(options: TransportOptions())
        assertTransportError(.notConnected, containing: "127.0.0.1", sent: false) {
            _ = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/echo", body: Data("{}".utf8)))
        }
    }

    func testConsecutiveRequestsReuseOneConnection() throws {
        let port = try startServer()
        let transport = try CurlTransport(options: TransportOptions())
        var clientPorts: [Int] = []
        for _ in 0..<3 {
            let response = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/echo", body: Data("{}".utf8)))
            XCTAssertEqual(response.status, 200)
            clientPorts.append(try JSONDecoder().decode(Echo.self, from: response.body).clientPort)
        }
        XCTAssertEqual(Set(clientPorts).count, 1, "expected one keep-alive connection, got client ports \(clientPorts)")

        // A 500 and a GET in between do not break reuse either.
        _ = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/error", body: Data("{}".utf8)))
        let again = try transport.send(HTTPRequest(url: "http://127.0.0.1:\(port)/echo", method: "GET"))
        XCTAssertEqual(try JSONDecoder().decode(Echo.self, from: again.body).clientPort, clientPorts[0])
    }

    // MARK: - TLS

    func testSelfSignedServerIsRefusedWithoutCABundleAndAcceptedWithIt() throws {
        let (certificate, key) = try makeSelfSignedCertificate()
        let port = try startServer(tls: (certificate: certificate, key: key))
        let url = "https://127.0.0.1:\(port)/echo"

        let strict = try CurlTransport(options: TransportOptions())
        assertTransportError(.tls, containing: "127.0.0.1", sent: false) {
            _ = try strict.send(HTTPRequest(url: url, body: Data("{}".utf8)))
        }

        let trusting = try CurlTransport(options: TransportOptions(caBundlePath: certificate))
        let response = try trusting.send(HTTPRequest(url: url, body: Data("{}".utf8)))
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(try JSONDecoder().decode(Echo.self, from: response.body).method, "POST")
    }

    func testMissingCABundleFailsInit() {
        let path = "/nonexistent/authctl-test-ca.pem"
        XCTAssertThrowsError(try CurlTransport(options: TransportOptions(caBundlePath: path))) { error in
            let error = error as? TransportError
            XCTAssertEqual(error?.kind, .other)
            XCTAssertTrue(
                error?.message.contains(path) ?? false, "message should name the path: \(String(describing: error))")
        }
    }

    func testCABundleWithoutCertificatesFailsInit() throws {
        let directory = try makeTempDirectory()
        let path = directory.appendingPathComponent("empty.pem").path
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try CurlTransport(options: TransportOptions(caBundlePath: path))) { error in
            XCTAssertEqual((error as? TransportError)?.kind, .other)
        }
    }

    // MARK: - Helpers

    private struct Echo: Decodable {
        var method: String
        var path: String
        var headers: [String: String]
        var body: String
        var clientPort: Int
    }

    private func assertTransportError(
        _ kind: TransportError.Kind, containing text: String, sent: Bool? = nil,
        file: StaticString = #filePath, line: UInt = #line,
        _ body: () throws -> Void
    ) {
        do {
            try body()
            XCTFail("expected TransportError(.\(kind))", file: file, line: line)
        } catch let error as TransportError {
            XCTAssertEqual(error.kind, kind, "message: \(error.message)", file: file, line: line)
            if let sent {
                XCTAssertEqual(
                    error.requestMayHaveBeenSent, sent, "whether the request may have been sent", file: file, line: line
                )
            }
            XCTAssertTrue(
                error.message.contains(text), "\"\(error.message)\" should mention \(text)", file: file, line: line)
        } catch {
            XCTFail("expected TransportError, got \(error)", file: file, line: line)
        }
    }

    private static let serverScript = #"""
        import base64, json, ssl, sys, time
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def reply(self, status, body, headers=(), with_length=True):
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                if with_length:
                    self.send_header("Content-Length", str(len(body)))
                else:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()

            def handle_any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = self.path
                if path == "/echo":
                    out = json.dumps({
                        "method": self.command,
                        "path": path,
                        "headers": {k.lower(): v for k, v in self.headers.items()},
                        "body": base64.b64encode(body).decode(),
                        "clientPort": self.client_address[1],
                    }).encode()
                    self.reply(200, out, [("Content-Type", "application/json"), ("X-Custom-Header", "Hello World")])
                elif path == "/error":
                    self.reply(500, b'{"message":"boom"}', [("X-Amzn-ErrorType", "InternalErrorException")])
                elif path.startswith("/big/"):
                    self.reply(200, b"x" * int(path.split("/")[2]))
                elif path.startswith("/bigstream/"):
                    self.reply(200, b"x" * int(path.split("/")[2]), with_length=False)
                elif path == "/stall":
                    time.sleep(10)
                    self.reply(200, b"late")
                else:
                    self.reply(404, b"")

            do_GET = do_POST = handle_any

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        if len(sys.argv) > 2:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1], sys.argv[2])
            server.socket = context.wrap_socket(server.socket, server_side=True)
        print(server.server_address[1], flush=True)
        server.serve_forever()
        """#

    /// Starts the Python server (TLS when given a certificate and key) and returns its port.
    private func startServer(tls: (certificate: String, key: String)? = nil) throws -> Int {
        var arguments = ["python3", "-c", Self.serverScript]
        if let tls {
            arguments += [tls.certificate, tls.key]
        }
        return try runAndReadPort(arguments)
    }

    /// A port on 127.0.0.1 that nothing listens on (bound once, then closed).
    private func closedPort() throws -> Int {
        try runAndReadPort([
            "python3", "-c",
            """
            import socket
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            print(s.getsockname()[1], flush=True)
            s.close()
            """,
        ])
    }

    private func runAndReadPort(_ arguments: [String]) throws -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        processes.append(process)

        var output = Data()
        while !output.contains(UInt8(ascii: "\n")) {
            let chunk = stdout.fileHandleForReading.availableData
            if chunk.isEmpty { break }  // EOF: the script died
            output.append(chunk)
        }
        let text = String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let port = Int(text) else {
            process.terminate()
            let errors = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw TestFailure("python3 did not report a port (stdout: \(text); stderr: \(errors))")
        }
        return port
    }

    private func makeTempDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("authctl-curl-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        tempDirectories.append(directory)
        return directory
    }

    /// A self-signed certificate for CN / SAN 127.0.0.1, from the openssl CLI.
    private func makeSelfSignedCertificate() throws -> (certificate: String, key: String) {
        let directory = try makeTempDirectory()
        let certificate = directory.appendingPathComponent("cert.pem").path
        let key = directory.appendingPathComponent("key.pem").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
            "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
            "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
        ]
        let stderr = Pipe()
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("openssl req failed: \(String(decoding: errors, as: UTF8.self))")
        }
        return (certificate, key)
    }

    private struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

import CCurl
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The real `HTTPTransport`: HTTP/1.1 and HTTP/2 over libcurl, through the `CCurl` shim.
///
/// - One libcurl easy handle per instance, reused for every request, so consecutive requests to
///   the same host share one connection (keep-alive) and one TLS session.
/// - TLS peer and host-name verification are always on; there is deliberately no way to turn them
///   off. `TransportOptions.caBundlePath` *adds* a CA to the system's trust store (it does not
///   replace it): the system bundle and that PEM file are concatenated in memory and handed to
///   libcurl with `CURLOPT_CAINFO_BLOB` (before libcurl 7.77, by path from a sealed memfd);
///   nothing is written to disk.
/// - Only `https` URLs, and plain `http` to this machine (`Loopback`); a loopback URL never goes
///   through a proxy. Other proxies come from libcurl's own handling of the environment:
///   `https_proxy`/`HTTPS_PROXY` for https URLs, `ALL_PROXY`/`all_proxy` and `NO_PROXY`/`no_proxy`.
/// - Redirects are not followed; response bodies are decompressed by libcurl and capped at
///   `maxResponseBytes` (after decompression). The extra CA is also trusted for an HTTPS proxy.
/// - Error messages name the host and libcurl's diagnosis, never the request or response headers
///   or bodies, which carry secrets.
///
/// Thread safety: requests on one instance are serialised by a lock (a libcurl easy handle must
/// never be used from two threads at once), so sharing an instance between threads is safe but
/// gives no parallelism; use one instance per thread for concurrent requests.
// Unchecked: `easy` and `caMemoryFile` are read and written only while `lock` is held.
public final class CurlTransport: HTTPTransport, @unchecked Sendable {
    private let options: TransportOptions
    /// System CA bundle + `caBundlePath`, when `caBundlePath` is set; nil means libcurl's defaults.
    private let caBlob: Data?
    private let easy: CurlEasyHandle
    private let connectTimeoutMS: Int
    private let requestTimeoutMS: Int
    /// Guards `easy`: libcurl easy handles are not thread-safe.
    private let lock = Mutex(())
    /// The memory file holding `caBlob` for a libcurl without CURLOPT_CAINFO_BLOB; -1 until one
    /// is needed. Only touched under `lock`.
    private var caMemoryFile: Int32 = -1

    /// Creates a transport with its own libcurl handle.
    ///
    /// Throws `TransportError` (kind `.other`) when libcurl cannot be initialised, when
    /// `options.caBundlePath` cannot be read or holds no PEM certificate, or when a timeout or the
    /// response cap is not a usable number.
    public init(options: TransportOptions) throws {
        let globalInit = CurlGlobal.initResult
        guard globalInit == CURLE_OK else {
            throw TransportError(
                kind: .other,
                message: "cannot initialise libcurl: \(String(cString: authctl_curl_load_error()))")
        }
        connectTimeoutMS = try milliseconds(options.connectTimeout, what: "connect timeout")
        requestTimeoutMS = try milliseconds(options.requestTimeout, what: "request timeout")
        guard options.maxResponseBytes >= 0 else {
            throw TransportError(
                kind: .other,
                message: "invalid response size limit \(options.maxResponseBytes)")
        }
        if let path = options.caBundlePath {
            caBlob = try combinedCABundle(extraPath: path)
        } else {
            caBlob = nil
        }
        guard let easy = CurlEasyHandle() else {
            throw TransportError(kind: .other, message: "cannot initialise libcurl: curl_easy_init failed")
        }
        self.easy = easy
        self.options = options
    }

    deinit {
        if caMemoryFile >= 0 { close(caMemoryFile) }
    }

    /// Sends one request and returns the final response whatever its status (redirects are not
    /// followed). Throws `TransportError` only when no complete HTTP response was received, or when
    /// the request itself cannot be expressed (bad method, header with a line break, GET with body).
    public func send(_ request: HTTPRequest) throws -> HTTPResponse {
        try lock.withLock { _ in try sendAlone(request) }
    }

    /// `send`, with the lock held.
    private func sendAlone(_ request: HTTPRequest) throws -> HTTPResponse {
        let host = hostForMessages(request.url)
        try validate(request)
        var connectMS = connectTimeoutMS
        var requestMS = requestTimeoutMS
        if let budget = options.budget {
            let left = budget.remaining
            guard left > 0.001 else {
                throw TransportError(
                    kind: .timeout,
                    message: "the command's time limit of "
                        + "\(formatSeconds(budget.seconds)) ran out before the request to \(host)",
                    requestMayHaveBeenSent: false)
            }
            let leftMS = Int((left * 1000).rounded(.up))
            connectMS = min(connectMS, leftMS)
            requestMS = min(requestMS, leftMS)
        }

        let handle = easy.raw
        // Forget the previous request's options; live connections, the TLS session cache and the
        // DNS cache survive curl_easy_reset, so keep-alive still works.
        authctl_curl_easy_reset(handle)

        let accumulator = ResponseAccumulator(maxBodyBytes: options.maxResponseBytes)
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer {
            // Detach the list from the handle before freeing it, so the handle never holds a
            // dangling pointer between requests.
            _ = authctl_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, nil)
            authctl_curl_slist_free_all(headerList)
        }

        try withExtendedLifetime(accumulator) {
            try configure(handle, for: request, accumulator: accumulator, connectMS: connectMS, requestMS: requestMS)
            headerList = try makeHeaderList(request.headers)
            try setopt(handle, CURLOPT_HTTPHEADER, "CURLOPT_HTTPHEADER") {
                authctl_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)
            }

            easy.errorBuffer[0] = 0
            let code =
                options.budget.map { budget in budget.spend { authctl_curl_easy_perform(handle) } }
                ?? authctl_curl_easy_perform(handle)
            guard code == CURLE_OK else {
                throw transportError(code, host: host, accumulator: accumulator)
            }
        }

        var status = 0
        let infoCode = authctl_curl_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        guard infoCode == CURLE_OK, status > 0 else {
            throw TransportError(kind: .other, message: "no HTTP status was received from \(host)")
        }
        return HTTPResponse(status: status, headers: accumulator.headers, body: accumulator.body)
    }

    // MARK: - Request setup

    private func configure(
        _ handle: UnsafeMutableRawPointer, for request: HTTPRequest,
        accumulator: ResponseAccumulator, connectMS: Int, requestMS: Int
    ) throws {
        func long(_ option: CURLoption, _ value: Int, _ name: String) throws {
            try setopt(handle, option, name) { authctl_curl_easy_setopt_long(handle, option, value) }
        }
        func string(_ option: CURLoption, _ value: String, _ name: String) throws {
            try setopt(handle, option, name) { authctl_curl_easy_setopt_string(handle, option, value) }
        }

        try setopt(handle, CURLOPT_ERRORBUFFER, "CURLOPT_ERRORBUFFER") {
            authctl_curl_easy_setopt_ptr(handle, CURLOPT_ERRORBUFFER, easy.errorBuffer)
        }
        try string(CURLOPT_URL, request.url, "CURLOPT_URL")
        // Plain http only to this machine (an emulator), and never through a proxy: a proxy named
        // by http_proxy / ALL_PROXY would otherwise see tokens and passwords in clear. Everything
        // else is https, redirects included (they are not followed, but the rule is libcurl's too).
        let loopback = Loopback.isLoopbackURL(request.url)
        // The shim picks CURLOPT_PROTOCOLS_STR or, on libcurl before 7.85, the older bit mask.
        try setopt(handle, CURLOPT_PROTOCOLS_STR, "the allowed protocols") {
            authctl_curl_easy_setopt_protocols(handle, loopback ? 1 : 0)
        }
        if loopback {
            try string(CURLOPT_NOPROXY, "*", "CURLOPT_NOPROXY")
        }
        try long(CURLOPT_NOSIGNAL, 1, "CURLOPT_NOSIGNAL")
        try long(CURLOPT_FOLLOWLOCATION, 0, "CURLOPT_FOLLOWLOCATION")
        try long(CURLOPT_CONNECTTIMEOUT_MS, connectMS, "CURLOPT_CONNECTTIMEOUT_MS")
        try long(CURLOPT_TIMEOUT_MS, requestMS, "CURLOPT_TIMEOUT_MS")
        try long(CURLOPT_TCP_KEEPALIVE, 1, "CURLOPT_TCP_KEEPALIVE")
        try string(CURLOPT_USERAGENT, options.userAgent, "CURLOPT_USERAGENT")
        // "" = every encoding this libcurl can decode; libcurl decompresses before the write callback.
        try string(CURLOPT_ACCEPT_ENCODING, "", "CURLOPT_ACCEPT_ENCODING")

        // TLS verification: always on, for the server and for an HTTPS proxy.
        try long(CURLOPT_SSL_VERIFYPEER, 1, "CURLOPT_SSL_VERIFYPEER")
        try long(CURLOPT_SSL_VERIFYHOST, 2, "CURLOPT_SSL_VERIFYHOST")
        try long(CURLOPT_PROXY_SSL_VERIFYPEER, 1, "CURLOPT_PROXY_SSL_VERIFYPEER")
        try long(CURLOPT_PROXY_SSL_VERIFYHOST, 2, "CURLOPT_PROXY_SSL_VERIFYHOST")
        if let caBlob {
            for (blobOption, pathOption, name) in [
                (CURLOPT_CAINFO_BLOB, CURLOPT_CAINFO, "CURLOPT_CAINFO"),
                (CURLOPT_PROXY_CAINFO_BLOB, CURLOPT_PROXY_CAINFO, "CURLOPT_PROXY_CAINFO"),
            ] {
                let code = caBlob.withUnsafeBytes { bytes in
                    authctl_curl_easy_setopt_blob(
                        handle, blobOption, bytes.baseAddress, bytes.count, UInt32(CURL_BLOB_COPY))
                }
                guard code != CURLE_OK else { continue }
                // libcurl before 7.77 (RHEL 9's 7.76, Debian 11's 7.74, Ubuntu 20.04's 7.68) knows
                // no blob option: the same bytes by path, from a memory file.
                guard code == CURLE_UNKNOWN_OPTION || code == CURLE_NOT_BUILT_IN else {
                    try setopt(handle, blobOption, name + "_BLOB") { code }
                    continue
                }
                try string(pathOption, try caMemoryFilePath(caBlob), name)
            }
        }

        // Method and body. The body is copied by libcurl (COPYPOSTFIELDS), never borrowed.
        if request.method == "GET" {
            try long(CURLOPT_HTTPGET, 1, "CURLOPT_HTTPGET")
        } else {
            if request.method != "POST" {
                try string(CURLOPT_CUSTOMREQUEST, request.method, "CURLOPT_CUSTOMREQUEST")
            }
            try setopt(handle, CURLOPT_POSTFIELDSIZE_LARGE, "CURLOPT_POSTFIELDSIZE_LARGE") {
                authctl_curl_easy_setopt_off_t(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
            }
            var empty: UInt8 = 0
            try request.body.withUnsafeBytes { bytes in
                try setopt(handle, CURLOPT_COPYPOSTFIELDS, "CURLOPT_COPYPOSTFIELDS") {
                    if let base = bytes.baseAddress, bytes.count > 0 {
                        return authctl_curl_easy_setopt_ptr(
                            handle, CURLOPT_COPYPOSTFIELDS,
                            UnsafeMutableRawPointer(mutating: base))
                    }
                    return authctl_curl_easy_setopt_ptr(handle, CURLOPT_COPYPOSTFIELDS, &empty)
                }
            }
        }

        // Response handling.
        if options.maxResponseBytes > 0 {
            // Refuses early when Content-Length already announces too much; the write callback
            // enforces the cap on the decoded bytes in every case.
            try setopt(handle, CURLOPT_MAXFILESIZE_LARGE, "CURLOPT_MAXFILESIZE_LARGE") {
                authctl_curl_easy_setopt_off_t(
                    handle, CURLOPT_MAXFILESIZE_LARGE,
                    curl_off_t(options.maxResponseBytes))
            }
        }
        let box = Unmanaged.passUnretained(accumulator).toOpaque()
        try setopt(handle, CURLOPT_WRITEFUNCTION, "CURLOPT_WRITEFUNCTION") {
            authctl_curl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlWriteCallback)
        }
        try setopt(handle, CURLOPT_WRITEDATA, "CURLOPT_WRITEDATA") {
            authctl_curl_easy_setopt_ptr(handle, CURLOPT_WRITEDATA, box)
        }
        try setopt(handle, CURLOPT_HEADERFUNCTION, "CURLOPT_HEADERFUNCTION") {
            authctl_curl_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlHeaderCallback)
        }
        try setopt(handle, CURLOPT_HEADERDATA, "CURLOPT_HEADERDATA") {
            authctl_curl_easy_setopt_ptr(handle, CURLOPT_HEADERDATA, box)
        }
    }

    /// `/proc/self/fd/N` of a sealed memory file holding `bundle`, made once per transport.
    private func caMemoryFilePath(_ bundle: Data) throws -> String {
        if caMemoryFile < 0 {
            let fd = bundle.withUnsafeBytes { bytes in
                bytes.baseAddress.map { authctl_curl_memory_file($0, bytes.count) } ?? -1
            }
            guard fd >= 0 else {
                throw TransportError(
                    kind: .other,
                    message:
                        "this libcurl takes extra CAs only by path, and no memory file could hold them: "
                        + String(cString: strerror(errno)))
            }
            caMemoryFile = fd
        }
        return "/proc/self/fd/\(caMemoryFile)"
    }

    private func setopt(
        _ handle: UnsafeMutableRawPointer, _ option: CURLoption, _ name: String,
        _ body: () -> CURLcode
    ) throws {
        let code = body()
        guard code == CURLE_OK else {
            throw TransportError(
                kind: .other,
                message: "libcurl refused \(name): \(curlErrorText(code))")
        }
    }

    private func validate(_ request: HTTPRequest) throws {
        guard !request.method.isEmpty, request.method.utf8.allSatisfy(isTokenByte) else {
            throw TransportError(kind: .other, message: "invalid HTTP method \"\(request.method)\"")
        }
        if request.method == "GET", !request.body.isEmpty {
            throw TransportError(kind: .other, message: "a GET request cannot carry a body")
        }
        for header in request.headers {
            guard !header.name.isEmpty, header.name.utf8.allSatisfy(isTokenByte) else {
                throw TransportError(kind: .other, message: "invalid HTTP header name \"\(header.name)\"")
            }
            // The value is a secret as often as not: name the header, never print the value.
            guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw TransportError(
                    kind: .other,
                    message: "the value of HTTP header \(header.name) contains a line break or NUL")
            }
        }
    }

    /// One `curl_slist` line per header, in order, plus `Expect:` (no 100-continue round trip)
    /// unless the caller set Expect itself. The caller frees the list.
    private func makeHeaderList(_ headers: [(name: String, value: String)]) throws -> UnsafeMutablePointer<curl_slist>?
    {
        var lines = headers.map { header -> String in
            // "Name:" would make libcurl *remove* the header; "Name;" sends it with an empty value.
            header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
        }
        if !headers.contains(where: { $0.name.lowercased() == "expect" }) {
            lines.append("Expect:")
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for line in lines {
            guard let appended = authctl_curl_slist_append(list, line) else {
                authctl_curl_slist_free_all(list)
                throw TransportError(kind: .other, message: "out of memory building the request headers")
            }
            list = appended
        }
        return list
    }

    // MARK: - Errors

    private func transportError(_ code: CURLcode, host: String, accumulator: ResponseAccumulator) -> TransportError {
        var error = classify(code, host: host, accumulator: accumulator)
        // libcurl counts the request bytes it wrote. None: the server cannot have acted on it
        // (TLS handshake failures included). Some, then a failed reconnect (a dead keep-alive
        // connection retried by libcurl): it may have, whatever the final error says.
        var requestBytes = 0
        if authctl_curl_easy_getinfo_long(easy.raw, CURLINFO_REQUEST_SIZE, &requestBytes) == CURLE_OK {
            error.requestMayHaveBeenSent = requestBytes > 0
            if requestBytes > 0 && error.kind == .notConnected { error.kind = .connection }
        }
        return error
    }

    private func classify(_ code: CURLcode, host: String, accumulator: ResponseAccumulator) -> TransportError {
        let detail = String(cString: easy.errorBuffer).trimmed()
        let text = curlErrorText(code)
        let diagnosis = detail.isEmpty || detail == text ? text : "\(text) (\(detail))"

        switch code {
        case CURLE_COULDNT_RESOLVE_HOST:
            return TransportError(kind: .notConnected, message: "cannot resolve \(host): \(diagnosis)")
        case CURLE_COULDNT_RESOLVE_PROXY:
            return TransportError(kind: .notConnected, message: "cannot resolve the proxy for \(host): \(diagnosis)")
        case CURLE_PROXY:
            return TransportError(kind: .connection, message: "proxy failure reaching \(host): \(diagnosis)")
        case CURLE_COULDNT_CONNECT:
            return TransportError(kind: .notConnected, message: "cannot connect to \(host): \(diagnosis)")
        case CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_PARTIAL_FILE,
            CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3:
            return TransportError(kind: .connection, message: "connection to \(host) failed: \(diagnosis)")
        case CURLE_OPERATION_TIMEDOUT:
            return TransportError(kind: .timeout, message: "request to \(host) timed out: \(diagnosis)")
        case CURLE_PEER_FAILED_VERIFICATION:
            return TransportError(
                kind: .tls,
                message: "cannot verify the TLS certificate of \(host): \(diagnosis); "
                    + "if it is signed by a private CA, add that CA with --ca-bundle or AWS_CA_BUNDLE")
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
            CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_INITFAILED,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED, CURLE_SSL_CRL_BADFILE,
            CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_CLIENTCERT, CURLE_USE_SSL_FAILED:
            return TransportError(kind: .tls, message: "TLS connection to \(host) failed: \(diagnosis)")
        case CURLE_FILESIZE_EXCEEDED:
            return TransportError(
                kind: .responseTooLarge,
                message:
                    "the response from \(host) is larger than the limit of \(BoundedFile.byteCount(options.maxResponseBytes))"
            )
        case CURLE_WRITE_ERROR where accumulator.bodyOverflow:
            return TransportError(
                kind: .responseTooLarge,
                message:
                    "the response from \(host) is larger than the limit of \(BoundedFile.byteCount(options.maxResponseBytes))"
            )
        case CURLE_WRITE_ERROR where accumulator.headersOverflow:
            return TransportError(
                kind: .responseTooLarge,
                message:
                    "the response headers from \(host) are larger than the limit of \(BoundedFile.byteCount(ResponseHeaders.maxBytes))"
            )
        default:
            return TransportError(kind: .other, message: "request to \(host) failed: \(diagnosis)")
        }
    }
}

// MARK: - libcurl handle and global state

/// libcurl loaded (dlopen) and `curl_global_init` called exactly once per process, on the first
/// transport: Swift initialises static lets once, thread-safely.
private enum CurlGlobal {
    static let initResult: CURLcode = authctl_curl_global_init()
}

/// Owns one libcurl easy handle and its error buffer, and cleans both up when released.
private final class CurlEasyHandle {
    let raw: UnsafeMutableRawPointer
    /// CURLOPT_ERRORBUFFER: must outlive every transfer on `raw`.
    let errorBuffer: UnsafeMutablePointer<CChar>

    init?() {
        guard let raw = authctl_curl_easy_init() else { return nil }
        self.raw = raw
        let size = max(authctl_curl_error_size(), 256)
        errorBuffer = .allocate(capacity: size)
        errorBuffer.initialize(repeating: 0, count: size)
    }

    deinit {
        authctl_curl_easy_cleanup(raw)
        errorBuffer.deallocate()
    }
}

/// Collects one response; reached from libcurl's C callbacks through an unretained pointer that is
/// only used during `curl_easy_perform`.
private final class ResponseAccumulator {
    let maxBodyBytes: Int
    var body = Data()
    var head = ResponseHeaders()
    var bodyOverflow = false

    init(maxBodyBytes: Int) {
        self.maxBodyBytes = maxBodyBytes
    }

    var headers: [String: String] { head.fields }
    var headersOverflow: Bool { head.overflow }

    /// Returns false when the chunk would exceed the cap (the transfer is then aborted).
    func appendBody(_ chunk: UnsafeRawBufferPointer) -> Bool {
        guard chunk.count <= maxBodyBytes - body.count else {
            bodyOverflow = true
            return false
        }
        if let base = chunk.baseAddress, chunk.count > 0 {
            body.append(base.assumingMemoryBound(to: UInt8.self), count: chunk.count)
        }
        return true
    }

    /// One header line as libcurl delivers it (status line, header, or the blank end line).
    func appendHeaderLine(_ chunk: UnsafeRawBufferPointer) -> Bool {
        head.add(line: chunk)
    }
}

private func curlWriteCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    let (total, overflow) = size.multipliedReportingOverflow(by: count)
    guard let userdata, !overflow else { return 0 }
    guard total > 0, let data else { return total }
    let accumulator = Unmanaged<ResponseAccumulator>.fromOpaque(userdata).takeUnretainedValue()
    return accumulator.appendBody(UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
}

private func curlHeaderCallback(
    _ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    let (total, overflow) = size.multipliedReportingOverflow(by: count)
    guard let userdata, !overflow else { return 0 }
    guard total > 0, let data else { return total }
    let accumulator = Unmanaged<ResponseAccumulator>.fromOpaque(userdata).takeUnretainedValue()
    return accumulator.appendHeaderLine(UnsafeRawBufferPointer(start: data, count: total)) ? total : 0
}

// MARK: - Helpers

private func curlErrorText(_ code: CURLcode) -> String {
    guard let text = authctl_curl_easy_strerror(code) else { return "libcurl error \(code.rawValue)" }
    return String(cString: text)
}

/// RFC 9110 `tchar`: the bytes allowed in a method or header name.
private func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        return true
    default:
        return "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }
}

/// The host of `url` for error messages (never the path or query), or a neutral phrase.
private func hostForMessages(_ url: String) -> String {
    if let host = URLComponents(string: url)?.host, !host.isEmpty {
        return host
    }
    return "the server"
}

private func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? "\(Int(seconds)) s" : "\(seconds) s"
}

private func milliseconds(_ seconds: Double, what: String) throws -> Int {
    guard seconds.isFinite, seconds > 0 else {
        throw TransportError(
            kind: .other, message: "invalid \(what) \(seconds): it must be a positive number of seconds")
    }
    let ms = (seconds * 1000).rounded(.up)
    return Int(min(ms, Double(Int32.max)))
}

// MARK: - CA bundle

/// The Debian/Ubuntu system bundle; libcurl's built-in default is the fallback.
private let systemCABundlePath = "/etc/ssl/certs/ca-certificates.crt"
/// Refuse to slurp something absurd (e.g. `--ca-bundle /dev/zero`).
private let maxCABundleBytes = 16 << 20

/// The system CA bundle followed by the PEM file at `extraPath`, for CURLOPT_CAINFO_BLOB.
private func combinedCABundle(extraPath: String) throws -> Data {
    let extra: Data
    do {
        extra = try BoundedFile.read(extraPath, maxBytes: maxCABundleBytes)
    } catch let reason as BoundedFile.Failure {
        throw TransportError(kind: .other, message: "cannot read the CA bundle \(extraPath): \(reason.text)")
    }
    guard extra.firstRange(of: Array("-----BEGIN CERTIFICATE-----".utf8)) != nil else {
        throw TransportError(kind: .other, message: "the CA bundle \(extraPath) contains no PEM certificate")
    }

    var candidates = [systemCABundlePath]
    if let builtIn = authctl_curl_default_cainfo() {
        candidates.append(String(cString: builtIn))
    }
    var combined = Data()
    for path in candidates {
        if let system = try? BoundedFile.read(path, maxBytes: maxCABundleBytes), !system.isEmpty {
            combined = system
            break
        }
    }
    // If no system bundle is readable, the extra CA is still trusted alongside libcurl's CA path.
    if !combined.isEmpty, combined.last != UInt8(ascii: "\n") {
        combined.append(UInt8(ascii: "\n"))
    }
    combined.append(extra)
    return combined
}

import CognitoClient
import LocalFormats
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What `exec --serve` hands out: the identity pool's AWS credentials and the session's tokens,
/// each with the time it was fetched (the refresh is planned from its lifetime).
package struct ServedCredentials: Sendable {
    package var aws: TemporaryAWSCredentials
    package var accessToken: String
    package var idToken: String
    package var tokensExpireAt: Date
    package var fetchedAt: Date

    package init(
        aws: TemporaryAWSCredentials, accessToken: String, idToken: String, tokensExpireAt: Date, fetchedAt: Date
    ) {
        self.aws = aws
        self.accessToken = accessToken
        self.idToken = idToken
        self.tokensExpireAt = tokensExpireAt
        self.fetchedAt = fetchedAt
    }

    /// The earlier of the two expiries: what the next refresh is planned from.
    package var expiresAt: Date { min(aws.expiration, tokensExpireAt) }

    /// The answer to one route, from what is held now: never waits.
    package func answer(_ route: EndpointRequest.Route, now: Date) -> EndpointAnswer {
        switch route {
        case .credentials:
            guard aws.expiration.timeIntervalSince(now) > Self.leastLeft else { return ServedCredentials.unavailable }
            let fields: [(String, String)] = [
                ("AccessKeyId", aws.accessKeyId), ("SecretAccessKey", aws.secretAccessKey),
                ("Token", aws.sessionToken), ("Expiration", Format.iso8601(aws.expiration)),
            ]
            let body = "{" + fields.map { "\(Format.json($0.0)):\(Format.json($0.1))" }.joined(separator: ",") + "}"
            return EndpointAnswer(status: 200, contentType: "application/json", body: body)
        case .token(let type):
            guard tokensExpireAt.timeIntervalSince(now) > Self.leastLeft else { return ServedCredentials.unavailable }
            return EndpointAnswer(
                status: 200, contentType: "text/plain", body: type == .access ? accessToken : idToken)
        }
    }

    /// Less than this left counts as expired: `Expiration` is written to the second, and a client
    /// handed credentials already expired by its reading fails (botocore: "still expired")
    /// where a 503 is retried.
    package static let leastLeft: Double = 1

    /// Nothing valid is held (the refresh keeps failing): an error the SDKs retry.
    package static let unavailable = EndpointAnswer.error(
        503, "authctl holds no valid credentials now (their refresh failed; it is retried): try again", retryAfter: 1)
}

/// When `exec --serve` refreshes: ahead of expiry by 20 minutes (the SDKs refresh 15 minutes
/// before, so they always find more than that left), or by half the lifetime when it is shorter
/// than 40 minutes; after a failure, again soon (a second at least, 30 at most).
package enum ServeSchedule {
    package static let ahead: Double = 20 * 60

    /// How long before expiry credentials fetched at `fetchedAt` are renewed.
    package static func margin(fetchedAt: Date, expiresAt: Date) -> Double {
        min(ahead, max(expiresAt.timeIntervalSince(fetchedAt), 0) / 2)
    }

    package static func refreshAt(fetchedAt: Date, expiresAt: Date) -> Date {
        expiresAt.addingTimeInterval(-margin(fetchedAt: fetchedAt, expiresAt: expiresAt))
    }

    /// The wait after a failed refresh while `remaining` seconds of the held ones are left.
    package static func retryAfterFailure(remaining: Double) -> Double {
        min(30, max(1, remaining / 10))
    }
}

/// `exec --serve`'s credentials endpoint on 127.0.0.1 (a port the system picks) for the life of
/// the command: answers each request at once from what is held (never waiting on a refresh, a
/// sign-in or a lock), while `keepFresh` renews what is held in the background. Only this user's
/// connections are read (`PeerCredentials`, as the browser listener does), and only a request with
/// the authorization token is answered (`EndpointRequest`).
package final class CredentialsEndpoint: Sendable {
    package let port: UInt16
    package let token: AuthorizationToken
    private let listening: Int32
    private let held: Mutex<ServedCredentials>
    /// `--debug`: each answer and renewal (routes and statuses only).
    private let trace: Trace?

    /// How long a connection may take to send its request head.
    package static let requestTimeout: Double = 2
    /// Connections read at once; beyond it the oldest is dropped.
    package static let maxPending = 32

    package init(serving initial: ServedCredentials, token: AuthorizationToken = .random(), trace: Trace? = nil) throws
    {
        do {
            listening = try LoopbackSocket.listen(family: AF_INET, port: 0)
        } catch {
            throw AuthctlError(
                .unavailable,
                "cannot listen on 127.0.0.1 for the credentials endpoint: \(String(cString: strerror(error.errno)))")
        }
        guard let port = LoopbackSocket.port(of: listening) else {
            close(listening)
            throw AuthctlError(.unavailable, "cannot read the credentials endpoint's port")
        }
        self.port = port
        self.token = token
        self.held = Mutex(initial)
        self.trace = trace
    }

    deinit { close(listening) }

    /// The base URL (the tokens are below it) and the full URI the SDKs read.
    package var baseURL: String { "http://127.0.0.1:\(port)" }
    package var credentialsURI: String { baseURL + EndpointRequest.credentialsPath }

    /// What the command's environment gets (and `removedVariables` says what it must not keep).
    package var environment: [(name: String, value: String)] {
        [
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", credentialsURI),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN", token.text), ("AUTHCTL_SERVE_URL", baseURL),
        ]
    }

    /// What the SDKs' credential chains would take before the container provider, or in its
    /// place: static keys, a relative URI or a token file, web identity, a named profile (whose
    /// keys or credential_process come first).
    package static let removedVariables = [
        "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", "AWS_CREDENTIAL_EXPIRATION",
        "AWS_ROLE_ARN", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
    ]

    /// The command's environment: the caller's without authctl's secrets and whatever would win
    /// over the endpoint, with the endpoint's variables and the profile's name.
    package func childEnvironment(_ environment: [String: String], profile: String) -> [String: String] {
        let removed = Set(ChildProcess.authctlSecrets + ChildProcess.awsSecrets + Self.removedVariables)
        var result = environment.filter { !removed.contains($0.key) }
        for variable in self.environment { result[variable.name] = variable.value }
        result["AUTHCTL_PROFILE"] = profile
        return result
    }

    package var current: ServedCredentials { held.withLock { $0 } }

    /// Serves until the process ends (on a thread of its own).
    package func start() {
        Threads.start(stackSize: 512 * 1024) { [self] in serve() }
    }

    /// Stops accepting: the command has ended.
    package func stop() { shutdown(listening, Int32(SHUT_RDWR)) }

    /// Renews what is held, forever (on a thread of its own): at `ServeSchedule`'s time, and again
    /// soon after a failure, while the held ones are served as long as they are valid.
    /// `fetch` is given the seconds of validity the new ones need; `report` hears of the first
    /// failure of a run of them (an error) and of the recovery (nil), and nothing else.
    package func keepFresh(
        now: @escaping () -> Date, fetch: @escaping (_ minValidity: Double) throws -> ServedCredentials,
        report: @escaping (Error?) -> Void
    ) {
        // A main thread's stack: a refresh runs the whole session and store code.
        Threads.start(stackSize: 8 << 20) { [self] in
            var retryIn: Double? = nil
            while true {
                let held = current
                let due = ServeSchedule.refreshAt(fetchedAt: held.fetchedAt, expiresAt: held.expiresAt)
                let wait = retryIn ?? due.timeIntervalSince(now())
                if wait > 0 { Self.sleep(wait) }
                do {
                    let fresh = try fetch(ServeSchedule.margin(fetchedAt: held.fetchedAt, expiresAt: held.expiresAt))
                    self.held.withLock { $0 = fresh }
                    trace?.record(.serveRenewal(renewed: true, validFor: fresh.expiresAt.timeIntervalSince(now())))
                    if retryIn != nil { report(nil) }
                    retryIn = nil
                } catch {
                    trace?.record(.serveRenewal(renewed: false, validFor: nil))
                    if retryIn == nil { report(error) }
                    retryIn = ServeSchedule.retryAfterFailure(remaining: held.expiresAt.timeIntervalSince(now()))
                }
            }
        }
    }

    private static func sleep(_ seconds: Double) {
        var time = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        var left = timespec()
        while nanosleep(&time, &left) != 0 && errno == EINTR { time = left }
    }

    /// A connection whose request head is still arriving.
    private struct Pending {
        var fd: Int32
        var head: [UInt8] = []
        var deadline: Date
    }

    private func serve() {
        var pending: [Pending] = []
        while true {
            let now = Date()
            for expired in pending where expired.deadline <= now {
                LoopbackSocket.answer(expired.fd, EndpointAnswer.error(400, "the request took too long").bytes)
            }
            pending.removeAll { $0.deadline <= now }
            var polled = [pollfd(fd: listening, events: Int16(POLLIN), revents: 0)]
            polled += pending.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let wait = pending.map { $0.deadline.timeIntervalSince(now) }.min() ?? 3600
            guard poll(&polled, nfds_t(polled.count), Int32(max(wait, 0) * 1000) + 1) > 0 else { continue }
            if polled[0].revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return }
            if polled[0].revents != 0 {
                while let fd = LoopbackSocket.acceptOne(listening) {
                    // Another local user's connection is refused before a byte of it is read.
                    guard PeerCredentials.uid(ofPeerOf: fd) == getuid() else {
                        LoopbackSocket.answer(fd, EndpointAnswer.error(403, "this is another user's endpoint").bytes)
                        continue
                    }
                    if pending.count >= Self.maxPending { close(pending.removeFirst().fd) }
                    pending.append(Pending(fd: fd, deadline: Date().addingTimeInterval(Self.requestTimeout)))
                }
            }
            for entry in polled.dropFirst() where entry.revents != 0 {
                guard let index = pending.firstIndex(where: { $0.fd == entry.fd }) else { continue }
                guard LoopbackSocket.readHead(entry.fd, into: &pending[index].head, limit: EndpointRequest.maxHeadBytes)
                else { continue }
                let request = pending.remove(at: index)
                LoopbackSocket.answer(request.fd, answer(request.head).bytes)
            }
        }
    }

    /// The answer to one request head.
    package func answer(_ head: [UInt8]) -> EndpointAnswer {
        switch EndpointRequest.route(head, port: port, token: token) {
        case .failure(let refusal):
            trace?.record(.served(StaticWord("refused"), status: refusal.status))
            return .error(refusal.status, refusal.message)
        case .success(let route):
            let answer = current.answer(route, now: Date())
            trace?.record(.served(route.traceName, status: answer.status))
            return answer
        }
    }
}

extension EndpointRequest.Route {
    var traceName: StaticWord {
        switch self {
        case .credentials: return StaticWord("credentials")
        case .token(.access): return StaticWord("tokens/access")
        case .token(.id): return StaticWord("tokens/id")
        }
    }
}

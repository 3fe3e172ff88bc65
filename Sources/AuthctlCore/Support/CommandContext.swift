import CognitoClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a command may touch: the console, the environment, the network, the store and the
/// output format. `live` builds the real ones; tests build fakes.
package final class CommandContext {
    package let console: Console
    package let environment: [String: String]
    package let now: () -> Date
    private let makeTransport: (TransportOptions) throws -> HTTPTransport
    /// Where what authctl keeps lives (see `kept(_:)`), opened on first use.
    package let backend: StoreBackend
    /// `--output`: every report of the command is emitted in it (`emit`).
    package var outputFormat: OutputFormat = .text
    private var transportCache: HTTPTransport?

    package init(console: Console, environment: [String: String], now: @escaping () -> Date = Date.init,
         makeTransport: @escaping (TransportOptions) throws -> HTTPTransport,
         backend: StoreBackend) {
        self.console = console
        self.environment = environment
        self.now = now
        self.makeTransport = makeTransport
        self.backend = backend
    }

    package static func live() -> CommandContext {
        let console = TerminalConsole()
        return CommandContext(
            console: console,
            environment: ProcessInfo.processInfo.environment,
            makeTransport: { try CurlTransport(options: $0) },
            backend: .live(console: console))
    }

    /// `--timeout`: the time the whole command may spend on the network (requests, retries and
    /// the waits between them), shared by the transport and every service's retry policy.
    package private(set) var budget: TimeBudget?

    /// Retries within the command's time budget.
    package var retryPolicy: RetryPolicy {
        var policy = RetryPolicy.standard
        policy.budget = budget
        return policy
    }

    /// One transport per process, so consecutive calls share a connection; made on the first
    /// request, so a command that makes none (token on a fresh session) sets up no TLS.
    /// `perRequest`: `--timeout` bounds each request instead of the whole command (a bulk ops run
    /// lasts as long as its users take at the quota's pace).
    package func transport(_ settings: Settings, perRequest: Bool = false) throws -> HTTPTransport {
        if let transportCache { return transportCache }
        let budget = perRequest ? nil : TimeBudget(seconds: settings.timeout)
        self.budget = budget
        // With a replica, a primary that does not answer has half the budget, so the replica
        // still gets its turn within --timeout.
        let perRequest = settings.hasReplica ? settings.timeout / 2 : settings.timeout
        let options = TransportOptions(caBundlePath: settings.caBundle, connectTimeout: min(10, perRequest),
                                       requestTimeout: perRequest, userAgent: "authctl/\(AuthctlVersion.current)",
                                       budget: budget)
        let makeTransport = self.makeTransport
        let transport = DeferredTransport {
            do {
                return try makeTransport(options)
            } catch let error as TransportError {
                throw AuthctlError(.configuration, "cannot set up HTTPS: \(error.message)")
            }
        }
        transportCache = transport
        return transport
    }

    /// Another transport, not the process's shared one, each request bounded by `--timeout`: for
    /// calls made side by side (a bulk ops run keeps a few in flight, one transport each).
    package func separateTransport(_ settings: Settings) -> HTTPTransport {
        let options = TransportOptions(caBundlePath: settings.caBundle, connectTimeout: min(10, settings.timeout),
                                       requestTimeout: settings.timeout, userAgent: "authctl/\(AuthctlVersion.current)",
                                       budget: nil)
        let makeTransport = self.makeTransport
        return DeferredTransport {
            do {
                return try makeTransport(options)
            } catch let error as TransportError {
                throw AuthctlError(.configuration, "cannot set up HTTPS: \(error.message)")
            }
        }
    }

    package func service(_ settings: Settings, client: ClientSettings) throws -> CognitoService {
        let transport = try transport(settings)
        return CognitoService(endpoint: client.endpoint, transport: transport, retryPolicy: retryPolicy)
    }
}

/// The release, in `--version` and the User-Agent of every request.
package enum AuthctlVersion {
    package static let current = "0.1.0"
}

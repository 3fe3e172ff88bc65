import CognitoClient
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The process's surroundings as a command may touch them: the console, the environment, the
/// clock, and how a transport is made and a store opened. `live()` is the real one; tests build
/// fakes. A `CommandContext` is made from it and the global options, once per invocation.
package struct ProcessHost {
    package let console: Console
    package let environment: [String: String]
    package let now: () -> Date
    package let makeTransport: (TransportOptions) throws -> HTTPTransport
    /// How a store of a kind is opened (`StoreBackend`).
    package let openStore: StoreBackend.Opener
    /// False for tests over one in-memory store: no config file is read or written for stores.
    package let resolvesProfiles: Bool

    package init(
        console: Console, environment: [String: String], now: @escaping () -> Date = Date.init,
        makeTransport: @escaping (TransportOptions) throws -> HTTPTransport,
        resolvesProfiles: Bool = true,
        openStore: @escaping StoreBackend.Opener
    ) {
        self.console = console
        self.environment = environment
        self.now = now
        self.makeTransport = makeTransport
        self.resolvesProfiles = resolvesProfiles
        self.openStore = openStore
    }

    /// For tests: one store for every kind, nothing recorded.
    package init(
        console: Console, environment: [String: String], now: @escaping () -> Date = Date.init,
        makeTransport: @escaping (TransportOptions) throws -> HTTPTransport,
        makeStore: @escaping StoreBackend.SingleStore
    ) {
        self.init(
            console: console, environment: environment, now: now, makeTransport: makeTransport,
            resolvesProfiles: false, openStore: { _, _ in makeStore() })
    }

    package static func live() -> ProcessHost {
        let console = TerminalConsole()
        return ProcessHost(
            console: console, environment: ProcessInfo.processInfo.environment,
            makeTransport: { try CurlTransport(options: $0) }, openStore: StoreBackend.liveStores(console: console))
    }
}

/// The global options as plain values: everything that shapes one invocation.
package struct InvocationOptions {
    package var settings: GlobalSettingsInput
    /// `--output`.
    package var output: OutputFormat
    /// `--store`.
    package var store: StoreKind?
    /// `--passphrase-fd`.
    package var passphraseFD: Int32?
    /// The command may ask a person for the file store's passphrase (not `status`, nor kube-token
    /// when kubectl says no one can answer).
    package var mayPrompt: Bool

    package init(
        settings: GlobalSettingsInput = GlobalSettingsInput(), output: OutputFormat = .text,
        store: StoreKind? = nil, passphraseFD: Int32? = nil, mayPrompt: Bool = true
    ) {
        self.settings = settings
        self.output = output
        self.store = store
        self.passphraseFD = passphraseFD
        self.mayPrompt = mayPrompt
    }
}

/// One invocation's state, built once from the host and the global options before the command
/// runs (SwiftPM's SwiftCommandState): the console, the environment, the output format, the
/// stores, the settings (resolved on first use, once), the profile's session owner and the
/// transport (made on the first request). Nothing in it is set after it is made.
package final class CommandContext {
    package let console: Console
    package let environment: [String: String]
    package let now: () -> Date
    private let makeTransport: (TransportOptions) throws -> HTTPTransport
    /// Where what authctl keeps lives (see `profileStore(_:)`), opened on first use.
    package let backend: StoreBackend
    /// config.toml, the one document the settings, the stores and `status`/`configure` read.
    package let config: ConfigSource
    /// `--output`: every report of the command is emitted in it (`emit`).
    package let outputFormat: OutputFormat
    private let settingsInput: GlobalSettingsInput
    private var resolvedSettings: Settings?
    private var transportCache: HTTPTransport?

    package init(host: ProcessHost, options: InvocationOptions = InvocationOptions()) {
        console = host.console
        environment = host.environment
        now = host.now
        makeTransport = host.makeTransport
        config = ConfigSource(environment: host.environment)
        backend = StoreBackend(
            resolvesProfiles: host.resolvesProfiles, option: options.store,
            passphraseFD: options.passphraseFD, mayPrompt: options.mayPrompt, config: config, host.openStore)
        outputFormat = options.output
        settingsInput = options.settings
    }

    /// The settings (flags > environment > config.toml > defaults), resolved on first use: a
    /// command that needs none reads no config file.
    package var settings: Settings {
        get throws {
            if let resolvedSettings { return resolvedSettings }
            let settings = try SettingsResolver.resolve(settingsInput, environment: environment, config: config)
            resolvedSettings = settings
            return settings
        }
    }

    /// The settings if they resolve, for the error path (which must not fail again).
    package var settingsIfResolvable: Settings? { try? settings }

    /// The profile's session owner.
    package var sessions: ProfileSession {
        get throws { ProfileSession(context: self, settings: try settings) }
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
        let options = TransportOptions(
            caBundlePath: settings.caBundle, connectTimeout: min(10, perRequest),
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
        let options = TransportOptions(
            caBundlePath: settings.caBundle, connectTimeout: min(10, settings.timeout),
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

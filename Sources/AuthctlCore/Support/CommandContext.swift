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
        let environment = ProcessInfo.processInfo.environment
        let console = TerminalConsole(environment: environment)
        return ProcessHost(
            console: console, environment: environment,
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
    /// What `--timeout` bounds: the whole command, or each request (a bulk ops run lasts as long
    /// as its users take at the quota's pace).
    package var timeoutScope: TimeoutScope
    /// `--debug`: the trace's format (nil: `AUTHCTL_DEBUG` decides).
    package var debug: TraceFormat?

    package init(
        settings: GlobalSettingsInput = GlobalSettingsInput(), output: OutputFormat = .text,
        store: StoreKind? = nil, passphraseFD: Int32? = nil, mayPrompt: Bool = true,
        timeoutScope: TimeoutScope = .wholeCommand, debug: TraceFormat? = nil
    ) {
        self.debug = debug
        self.settings = settings
        self.output = output
        self.store = store
        self.passphraseFD = passphraseFD
        self.mayPrompt = mayPrompt
        self.timeoutScope = timeoutScope
    }
}

/// What `--timeout` bounds.
package enum TimeoutScope: Sendable {
    /// Every request, retry and wait of the command together (the default).
    case wholeCommand
    /// Each request on its own, with no retries in the service: the caller paces and retries
    /// (the bulk ops engine).
    case eachRequest
}

/// One invocation's state, built once from the host and the global options before the command
/// runs (SwiftPM's SwiftCommandState): the console, the environment, the output format, the
/// stores, what `--timeout` bounds, and three things made on first use and then kept: the
/// settings (a command that needs none reads no config file), the network (one transport and its
/// retry policy, derived together from the settings: no TLS for a command that makes no
/// request) and the profile's session service. Nothing in it is set after it is made: the first
/// use of each lazy part fixes it, whatever asks first.
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
    /// What `--timeout` bounds, fixed by the command before it runs.
    package let timeoutScope: TimeoutScope
    private let settingsInput: GlobalSettingsInput
    private let resolved = Once<Settings>()
    private let network = Once<Network>()
    private let session = Once<ProfileSession>()
    /// `--debug` / `AUTHCTL_DEBUG`: nil when off, and then nothing is traced or formatted.
    package let trace: Trace?

    package init(host: ProcessHost, options: InvocationOptions = InvocationOptions()) {
        console = host.console
        environment = host.environment
        now = host.now
        makeTransport = host.makeTransport
        // Read here, not by the parser, so every way into a command (the fast path too) honours it.
        let format = options.debug ?? Self.traceFormat(environment: host.environment, console: host.console)
        let trace = format.map { Trace(console: host.console, format: $0) }
        self.trace = trace
        config = ConfigSource(environment: host.environment)
        backend = StoreBackend(
            resolvesProfiles: host.resolvesProfiles, option: options.store,
            passphraseFD: options.passphraseFD, mayPrompt: options.mayPrompt, config: config, trace: trace,
            host.openStore)
        outputFormat = options.output
        timeoutScope = options.timeoutScope
        settingsInput = options.settings
    }

    /// The settings (flags > environment > config.toml > defaults), resolved on first use: a
    /// command that needs none reads no config file.
    package var settings: Settings {
        get throws {
            try resolved.value {
                let settings = try SettingsResolver.resolve(settingsInput, environment: environment, config: config)
                console.useSecretPrompts(settings.secretPrompts)
                if let trace {
                    SettingsTrace.record(settings, input: settingsInput, environment: environment, to: trace)
                }
                return settings
            }
        }
    }

    /// The settings if they resolve, for the error path (which must not fail again).
    package var settingsIfResolvable: Settings? { try? settings }

    /// The profile's session service: the resolved settings, the profile's store and the
    /// transport, with the session's use cases (a fresh session, calls under a policy, a sign-in
    /// kept through one function). Made once, on first use; it refers back to the context, and
    /// the two live as long as the invocation.
    package var profileSession: ProfileSession {
        get throws { try session.value { ProfileSession(context: self, settings: try settings) } }
    }

    /// The one transport and its retry policy, made from the settings once.
    private struct Network {
        var transport: HTTPTransport
        var retryPolicy: RetryPolicy
    }

    private var madeNetwork: Network {
        get throws {
            try network.value {
                let settings = try self.settings
                // `--timeout` for the whole command is one budget, shared by the transport and
                // every service's retries; for each request, the ops engine retries itself.
                let budget = timeoutScope == .wholeCommand ? TimeBudget(seconds: settings.timeout) : nil
                var retryPolicy = timeoutScope == .wholeCommand ? RetryPolicy.standard : RetryPolicy.none
                retryPolicy.budget = budget
                retryPolicy.observer = trace?.serviceObserver
                // With a replica, a primary that does not answer has half the budget, so the replica
                // still gets its turn within --timeout.
                let perRequest = settings.hasReplica ? settings.timeout / 2 : settings.timeout
                let transport = deferredTransport(settings, requestTimeout: perRequest, budget: budget)
                return Network(transport: transport, retryPolicy: retryPolicy)
            }
        }
    }

    /// Retries as `--timeout` allows: within the command's time budget, or none (the caller
    /// retries) when it bounds each request.
    package var retryPolicy: RetryPolicy {
        get throws { try madeNetwork.retryPolicy }
    }

    /// One transport per process, so consecutive calls share a connection; made on the first
    /// request, so a command that makes none (token on a fresh session) sets up no TLS.
    package func transport() throws -> HTTPTransport {
        try madeNetwork.transport
    }

    /// Another transport, not the process's shared one, each request bounded by `--timeout`: for
    /// calls made side by side (a bulk ops run keeps a few in flight, one transport each).
    package func separateTransport() throws -> HTTPTransport {
        let settings = try self.settings
        return deferredTransport(settings, requestTimeout: settings.timeout, budget: nil)
    }

    private func deferredTransport(_ settings: Settings, requestTimeout: Double, budget: TimeBudget?)
        -> HTTPTransport
    {
        let options = TransportOptions(
            caBundlePath: settings.caBundle, connectTimeout: min(10, requestTimeout),
            requestTimeout: requestTimeout, userAgent: "authctl/\(AuthctlVersion.current)", budget: budget)
        let makeTransport = self.makeTransport
        let transport = DeferredTransport {
            do {
                return try makeTransport(options)
            } catch let error as TransportError {
                throw AuthctlError(.configuration, "cannot set up HTTPS: \(error.message)")
            }
        }
        // Its exchanges traced only when the trace is on.
        guard let trace else { return transport }
        return ObservedTransport(transport, observer: trace.serviceObserver)
    }

    /// `AUTHCTL_DEBUG`'s format; a value that is none is said and leaves the trace off.
    private static func traceFormat(environment: [String: String], console: Console) -> TraceFormat? {
        do {
            return try TraceFormat.fromEnvironment(environment)
        } catch {
            console.message("authctl: warning: \(AuthctlError.from(error).message); no trace is written")
            return nil
        }
    }

    /// The user pool's service for `client`, on the process's transport.
    package func service(client: ClientSettings) throws -> CognitoService {
        CognitoService(endpoint: client.endpoint, transport: try transport(), retryPolicy: try retryPolicy)
    }
}

/// A value made on first use and then kept: what the invocation's lazy parts hold. A failure is
/// not kept (the next use tries again and fails the same way: the inputs are constants).
final class Once<Value> {
    private var made: Value?

    func value(_ make: () throws -> Value) rethrows -> Value {
        if let made { return made }
        let value = try make()
        made = value
        return value
    }
}

/// The release, in `--version` and the User-Agent of every request.
package enum AuthctlVersion {
    package static let current = "0.1.0"
}

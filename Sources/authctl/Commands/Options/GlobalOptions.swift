import ArgumentParser
import AuthctlCore
import SecureStore

/// Options every subcommand takes. Flags win over the environment, which wins over the profile.
struct GlobalOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Profile in the config file, and the name the session is stored under (env AUTHCTL_PROFILE; default: default).",
            valueName: "name"))
    var profile: String?

    @Option(help: ArgumentHelp("User pool id, <region>_<id> (env AUTHCTL_USER_POOL_ID).", valueName: "id"))
    var userPoolId: String?

    @Option(help: ArgumentHelp("App client id (env AUTHCTL_CLIENT_ID).", valueName: "id"))
    var clientId: String?

    @Option(
        help: ArgumentHelp(
            "AWS region (env AUTHCTL_REGION, AWS_REGION, AWS_DEFAULT_REGION; default: the pool id's prefix).",
            valueName: "region"))
    var region: String?

    @Option(
        help: ArgumentHelp(
            "Cognito endpoint URL (env AUTHCTL_ENDPOINT, AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER, AWS_ENDPOINT_URL; default: https://cognito-idp.<region>.amazonaws.com/).",
            valueName: "url"))
    var endpoint: String?

    @Option(
        help: ArgumentHelp(
            "Region of the pool's replica (multi-Region replication): sign-in, refresh and sign-out go there once when the primary does not answer (env AUTHCTL_FAILOVER_REGION, profile failover_region).",
            valueName: "region"))
    var failoverRegion: String?

    @Option(
        help: ArgumentHelp(
            "The replica's endpoint URL, for emulators (env AUTHCTL_FAILOVER_ENDPOINT; default: https://cognito-idp.<failover region>.amazonaws.com/).",
            valueName: "url"))
    var failoverEndpoint: String?

    @Option(
        help: ArgumentHelp("PEM file of extra certificate authorities to trust (env AWS_CA_BUNDLE).", valueName: "path")
    )
    var caBundle: String?

    @Option(
        help: ArgumentHelp(
            "Seconds the whole command may spend on the network: every request, retry and refresh (default: 30).",
            valueName: "seconds"))
    var timeout: Double?

    @Option(help: "Output format: text (messages on stderr) or json (a document on stdout).")
    var output: OutputFormat = .text

    @Option(
        help: ArgumentHelp(
            "Where the profile's session and caches are kept: secret-service, kernel-keyring or file (env AUTHCTL_STORE; default: the store recorded in the profile, else secret-service).",
            valueName: "store"))
    var store: StoreKind?

    @Option(
        help: ArgumentHelp(
            "Read the file store's passphrase from this open file descriptor (before AUTHCTL_STORE_PASSPHRASE_FILE, AUTHCTL_STORE_PASSPHRASE and the terminal).",
            valueName: "n"))
    var passphraseFd: Int32?

    @Option(
        help: ArgumentHelp(
            "Trace what authctl does on stderr, one line per event: settings and their sources, the store, requests, retries, caches, challenges, locks. --debug for text, --debug=json for JSON Lines (env AUTHCTL_DEBUG=1 or json). Never holds a secret.",
            valueName: "format"))
    var debug: TraceFormat?

    func validate() throws {
        if let timeout, !(timeout > 0 && timeout <= 3600) {
            throw ValidationError("--timeout must be a number of seconds between 0 and 3600.")
        }
        if let passphraseFd, passphraseFd < 0 {
            throw ValidationError("--passphrase-fd must be an open file descriptor number (0 or more).")
        }
    }
}

extension StoreKind: ExpressibleByArgument {}

extension GlobalOptions {
    /// The options that shape the settings, for the core.
    var settingsInput: GlobalSettingsInput { invocationOptions.settings }

    /// Everything that shapes the invocation (`CommandContext`): through the plain values, as the
    /// fast path builds it (`FastPath`), so both front doors make the same context.
    var invocationOptions: InvocationOptions { values.invocationOptions }
}

extension OutputFormat: ExpressibleByArgument {}

extension TraceFormat: ExpressibleByArgument {}

extension GlobalOptions {
    /// `--debug` takes its format after `=` only (`--debug=json`), so a bare `--debug` is made
    /// `--debug=text` before parsing. Given before the subcommand (`authctl --debug token`, as
    /// `aws --debug`), it is moved after it. Nothing after `--` (exec's command) is touched.
    static func withDebugFormat(_ arguments: [String]) -> [String] {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        var own = arguments[..<end].map { $0 == "--debug" ? "--debug=text" : $0 }
        let leading = own.prefix { $0.hasPrefix("--debug=") }
        own.removeFirst(leading.count)
        return own + leading + arguments[end...]
    }
}

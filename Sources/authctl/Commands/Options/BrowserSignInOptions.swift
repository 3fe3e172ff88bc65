import ArgumentParser
import AuthctlCore

/// `signin --browser` and its options.
struct BrowserSignInOptions: ParsableArguments {
    @Flag(
        help:
            "Sign in through the pool's managed login in a browser (authorization code with PKCE): for single sign-on, Google, SAML…"
    )
    var browser = false

    @Flag(
        help:
            "With --browser: open nothing; print the URL and read the final redirect URL on the terminal (or standard input)."
    )
    var noBrowser = false

    @Option(
        name: .customLong("idp"),
        help: ArgumentHelp(
            "With --browser: go straight to this identity provider (identity_provider), skipping the choice page.",
            valueName: "name"))
    var identityProvider: String?

    @Option(
        help: ArgumentHelp(
            "With --browser: login (ask again even when the browser is signed in) or select_account.",
            valueName: "prompt"))
    var prompt: String?

    @Option(
        name: .customLong("scope"),
        help: ArgumentHelp(
            "With --browser: scopes to ask for, repeatable or space-separated (default: openid email profile aws.cognito.signin.user.admin).",
            valueName: "scope"))
    var scopes: [String] = []

    @Option(
        help: ArgumentHelp(
            "With --browser: the loopback port of the redirect URI http://localhost:N/callback, registered on the app client (profile redirect_port; default 8400).",
            valueName: "port"))
    var redirectPort: Int?

    @Option(
        help: ArgumentHelp(
            "With --browser: give up after this many seconds without an answer.", valueName: "seconds"))
    var browserTimeout: Double = 180

    @OptionGroup var managedLogin: ManagedLoginOptions

    /// The plain value the sign-in pipeline takes.
    var choice: BrowserSignInChoice {
        BrowserSignInChoice(
            noBrowser: noBrowser, identityProvider: identityProvider, prompt: prompt, scopes: scopes,
            redirectPort: redirectPort, browserTimeout: browserTimeout, managedLogin: managedLogin.choice)
    }

    func validate() throws {
        if !browser && (noBrowser || identityProvider != nil || prompt != nil || !scopes.isEmpty || redirectPort != nil)
        {
            throw ValidationError("--no-browser, --idp, --prompt, --scope and --redirect-port go with --browser.")
        }
        if let prompt, !["login", "select_account"].contains(prompt) {
            throw ValidationError("--prompt must be login or select_account.")
        }
        if let redirectPort, !(1...65535).contains(redirectPort) {
            throw ValidationError("--redirect-port must be a port number, 1 to 65535.")
        }
        if !(browserTimeout > 0 && browserTimeout <= 3600) {
            throw ValidationError("--browser-timeout must be between 0 and 3600 seconds.")
        }
    }
}

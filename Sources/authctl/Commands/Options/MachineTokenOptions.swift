import ArgumentParser
import AuthctlCore

/// `--client-credentials` and its options, shared by `token` and `exec`.
struct MachineTokenOptions: ParsableArguments {
    @Flag(
        help:
            "A machine-to-machine access token of the app client itself (OAuth client_credentials at the managed-login domain), cached in the profile's store."
    )
    var clientCredentials = false

    @Option(
        name: .customLong("scope"),
        help: ArgumentHelp(
            "With --client-credentials: a scope to ask for (repeatable or space-separated, e.g. orders/read); default: every scope the client is allowed.",
            valueName: "scope"))
    var scopes: [String] = []

    @Flag(help: "With --client-credentials: cache nothing (no store needed); every call asks the token endpoint.")
    var noStore = false

    @OptionGroup var managedLogin: ManagedLoginOptions

    /// The plain value the core takes.
    var choice: MachineTokenChoice {
        MachineTokenChoice(scopes: scopes, noStore: noStore, managedLogin: managedLogin.choice)
    }

    func validate() throws {
        if !clientCredentials && (!scopes.isEmpty || noStore || managedLogin.domain != nil) {
            throw ValidationError("--scope, --no-store and --domain go with --client-credentials.")
        }
    }
}

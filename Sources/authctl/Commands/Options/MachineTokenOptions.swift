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
            "With --client-credentials, --audience or --resource: a scope to ask for (repeatable or space-separated, e.g. orders/read); default: every scope the client is allowed (the session's own for --audience).",
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
        if !clientCredentials && (noStore || managedLogin.domain != nil) {
            throw ValidationError("--no-store and --domain go with --client-credentials.")
        }
    }

    /// `--scope` needs a token it applies to (checked by the command, which knows its other options).
    func checkScopes(derived: DerivedTokenOptions) throws {
        if !scopes.isEmpty && !clientCredentials && !derived.given {
            throw ValidationError("--scope goes with --client-credentials, --audience or --resource.")
        }
        if clientCredentials && derived.given {
            throw ValidationError(
                "--client-credentials is the app client's own token: not with --audience or --resource.")
        }
    }
}

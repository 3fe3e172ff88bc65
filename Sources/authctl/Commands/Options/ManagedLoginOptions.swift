import ArgumentParser
import AuthctlCore
import CognitoClient

/// `--domain`, shared by the commands that talk to the pool's managed login (browser sign-in,
/// its sign-out, machine tokens, configure).
struct ManagedLoginOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The pool's managed-login domain, https://PREFIX.auth.REGION.amazoncognito.com or a custom domain (env AUTHCTL_DOMAIN, profile domain).",
            valueName: "url"))
    var domain: String?

    /// The plain value the core takes.
    var choice: ManagedLoginChoice { ManagedLoginChoice(domain: domain) }

    func resolve(_ settings: Settings) throws -> ManagedLoginDomain { try choice.resolve(settings) }
}

import ArgumentParser

enum TokenType: String, CaseIterable, ExpressibleByArgument {
    case access
    case id
}

/// Which token and how fresh it must be: shared by `token`, `exec` and `kube-token`.
struct FreshnessOptions: ParsableArguments {
    @Option(name: .customLong("type"), help: "Which token: access or id (default: access; kube-token: id). exec puts it in AUTHCTL_TOKEN; both are always in AUTHCTL_ACCESS_TOKEN and AUTHCTL_ID_TOKEN.")
    var givenType: TokenType?

    @Option(help: ArgumentHelp("Refresh first when the access token expires within this many seconds.", valueName: "seconds"))
    var minValid: Double = 60

    /// `--type`, else the command's own default.
    func type(default defaultType: TokenType = .access) -> TokenType { givenType ?? defaultType }

    func validate() throws {
        if minValid < 0 || minValid > 86_400 { throw ValidationError("--min-valid must be between 0 and 86400 seconds.") }
    }
}

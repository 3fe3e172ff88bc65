import ArgumentParser
import AuthctlCore

/// Which token and how fresh it must be: shared by `token`, `exec` and `kube-token`.
struct FreshnessOptions: ParsableArguments {
    @Option(
        name: .customLong("type"),
        help:
            "Which token: access or id (default: access; kube-token: id). exec: repeat it for both (AUTHCTL_TOKEN holds the first)."
    )
    var givenTypes: [TokenType] = []

    @Option(
        name: .customLong("min-valid"),
        help: ArgumentHelp(
            "Refresh first when the access token expires within this many seconds (0 to 86400; default 60).",
            valueName: "seconds"))
    var givenMinValid: Double?

    /// `--min-valid`, else 60 s.
    var minValid: Double { givenMinValid ?? 60 }

    /// `--type`, else the command's own default (`token` and `kube-token` take one).
    func type(default defaultType: TokenType = .access) -> TokenType { givenTypes.first ?? defaultType }

    /// `exec`: the tokens asked for, in order, without repeats.
    func types(default defaultType: TokenType = .access) -> [TokenType] {
        var seen: [TokenType] = []
        for type in givenTypes.isEmpty ? [defaultType] : givenTypes where !seen.contains(type) { seen.append(type) }
        return seen
    }

    func validate() throws {
        if !(0...86_400).contains(minValid) {
            throw ValidationError("--min-valid must be between 0 and 86400 seconds.")
        }
    }

    /// For the commands that hand out one token.
    func requireOneType() throws {
        if Set(givenTypes).count > 1 {
            throw ValidationError("--type: this command gives one token; give --type once.")
        }
    }
}

extension TokenType: ExpressibleByArgument {}

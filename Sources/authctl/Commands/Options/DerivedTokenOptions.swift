import ArgumentParser
import AuthctlCore
import CognitoClient

/// `--audience`/`--resource` (and `--actor-token-stdin`): a token exchanged for one downstream
/// service (GetDerivedToken), shared by `token` and `exec`.
struct DerivedTokenOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A token for this audience only: the session's access token exchanged (GetDerivedToken), cached in the session's item.",
            valueName: "audience"))
    var audience: String?

    @Option(
        help: ArgumentHelp(
            "A token for this resource server only (its identifier URI), as --audience does for an audience.",
            valueName: "uri"))
    var resource: String?

    /// Asked for: one of the two.
    var given: Bool { audience != nil || resource != nil }

    func target() -> DerivedTokenRequest.Target? {
        if let audience { return .audience(audience) }
        return resource.map { .resource($0) }
    }

    func validate() throws {
        if audience != nil && resource != nil {
            throw ValidationError("--audience or --resource: Cognito exchanges a token for one of the two, not both.")
        }
        for (name, value) in [("--audience", audience), ("--resource", resource)] {
            guard let value else { continue }
            if value.isEmpty || value.utf8.count > 2048
                || value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f })
            {
                throw ValidationError(
                    "\(name) must be a name or URI of 1 to 2048 characters without control characters.")
            }
        }
    }
}

import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct KubeToken: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "kube-token",
        abstract: "Print a Kubernetes ExecCredential with a fresh Cognito token (a kubectl credential plugin).",
        discussion: """
            In a kubeconfig user: exec with command: authctl, args: [kube-token, --profile, NAME], \
            apiVersion client.authentication.k8s.io/v1 (or v1beta1) and interactiveMode: IfAvailable. \
            Answers in the apiVersion KUBERNETES_EXEC_INFO asks for. Without a session it signs in on the \
            terminal only when KUBERNETES_EXEC_INFO says kubectl is interactive; otherwise it exits 77.
            """)

    @OptionGroup var global: GlobalOptions

    /// `--type`: the token the API server gets, id by default (what OIDC issuers check).
    @OptionGroup var freshness: FreshnessOptions

    private var type: TokenType { freshness.type(default: .id) }

    func validate() throws { try freshness.requireOneType() }

    /// kubectl's interactiveMode Never (spec.interactive false): nothing asks on the terminal, not
    /// even for the file store's passphrase (a locked store is exit 78 naming `authctl unlock`).
    func mayPrompt(environment: [String: String]) -> Bool { Self.mayPrompt(environment: environment) }

    static func mayPrompt(environment: [String: String]) -> Bool {
        (try? ExecCredentialRequest(environment["KUBERNETES_EXEC_INFO"]))?.interactive ?? false
    }

    func execute(in context: CommandContext) throws {
        try Self.printCredential(type, minValid: freshness.minValid, in: context)
    }

    /// The work both front doors run (`FastPath`).
    static func printCredential(_ type: TokenType, minValid: Double, in context: CommandContext) throws {
        let request = try ExecCredentialRequest(context.environment["KUBERNETES_EXEC_INFO"])
        // A password sign-in on the terminal (kubectl hands over its standard input in
        // interactive mode), through the same pipeline as `authctl signin`; only stderr is written.
        let signIn: SignInWhenNeeded =
            request.interactive ? .whenSignedOut(SignInRequest(method: .password(.srp))) : .never
        let fresh: FreshToken
        do {
            fresh = try context.profileSession.freshToken(type, minValidity: minValid, signIn: signIn)
        } catch let error as SessionError where error.isNotSignedIn && !request.interactive {
            let profile = try context.settings.profile
            throw AuthctlError(
                .notAuthorized,
                """
                Not signed in (profile \(profile)), and kubectl is not interactive here. \
                Run: authctl signin --profile \(profile)
                """)
        }
        if fresh.signedIn {
            context.console.message(SignInSummary(fresh.session).textMessages.joined(separator: "\n"))
        }
        context.emit(
            ExecCredential(
                apiVersion: request.apiVersion, spec: .init(interactive: request.interactive),
                status: .init(token: fresh.token, expirationTimestamp: fresh.expiresAt)))
    }
}

/// What kubectl asks in KUBERNETES_EXEC_INFO: the apiVersion to answer in, and whether a person
/// can be asked. Absent (run by hand): v1, not interactive.
struct ExecCredentialRequest: Equatable {
    static let supportedVersions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]

    var apiVersion = "client.authentication.k8s.io/v1"
    var interactive = false

    init(_ json: String?) throws {
        guard let json, !json.isEmpty else { return }
        struct Wire: Decodable {
            struct Spec: Decodable { var interactive: Bool? }
            var apiVersion: String?
            var kind: String?
            var spec: Spec?
        }
        guard let wire = try? JSONDecoder().decode(Wire.self, from: Data(json.utf8)) else {
            throw AuthctlError(.usage, "KUBERNETES_EXEC_INFO is not an ExecCredential JSON document")
        }
        if let version = wire.apiVersion {
            guard Self.supportedVersions.contains(version) else {
                throw AuthctlError(
                    .configuration,
                    """
                    kubectl asks for an ExecCredential in \(version.debugDescription); authctl answers in \
                    \(Self.supportedVersions.joined(separator: " or ")): set that apiVersion in the kubeconfig's exec entry
                    """)
            }
            apiVersion = version
        }
        interactive = wire.spec?.interactive ?? false
    }
}

/// client.authentication.k8s.io ExecCredential (the same shape in v1 and v1beta1): what kubectl
/// reads on stdout, a JSON document whatever `--output` says.
struct ExecCredential: CommandReport {
    struct Spec: Encodable { var interactive: Bool }
    struct Status: Encodable {
        var token: String
        var expirationTimestamp: Date
    }

    var kind = "ExecCredential"
    var apiVersion: String
    var spec: Spec
    var status: Status

    var document: String? { Format.json(self) }
}

import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct SignUp: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "signup",
        abstract: "Create an account in the user pool (SignUp); the pool sends a code to confirm it.",
        discussion: """
            The password is asked twice on the terminal without echo, or read from the first line of \
            standard input with --password-stdin. Then confirm the account with \
            `authctl confirm-signup --username NAME` and sign in.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    @Option(
        name: .customLong("attribute"),
        help: ArgumentHelp("A user attribute, e.g. email=alice@example.com (repeatable).", valueName: "name=value"))
    var attributes: [String] = []

    @Flag(help: "Read the password from the first line of standard input.")
    var passwordStdin = false

    func validate() throws {
        _ = try Self.parse(attributes)
    }

    /// `NAME=VALUE` pairs; a name given twice is refused rather than silently overwritten.
    static func parse(_ pairs: [String]) throws -> [AttributeType] {
        var seen = Set<String>()
        return try pairs.map { pair in
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError(
                    "--attribute takes NAME=VALUE, e.g. email=alice@example.com; got \(UntrustedText(pair))")
            }
            let name = String(pair[..<equals])
            guard seen.insert(name).inserted else {
                throw ValidationError("--attribute \(UntrustedText(name)) is given twice")
            }
            return AttributeType(name: name, value: String(pair[pair.index(after: equals)...]))
        }
    }

    func execute(in context: CommandContext) throws {
        let support = try AccountCommandSupport(context: context)
        let console = context.console
        if !passwordStdin && !console.canPrompt {
            throw AuthctlError(
                .usage, "no terminal to ask for the password: pipe it on standard input with --password-stdin")
        }
        let username = try support.username(account)
        let password = try NewPasswordReader.read(
            console: console, fromStdin: passwordStdin,
            stdinMissing: "--password-stdin: standard input held no password",
            prompt: "Password: ")
        let appClient = try support.appClient()
        let response: SignUpResponse
        do {
            response = try support.service().signUp(
                username: username, password: password,
                attributes: try Self.parse(attributes), client: appClient)
        } catch {
            throw AccountFailure.from(
                error, step: .signUp, username: username, endpoint: support.client.endpoint,
                hasSecret: appClient.clientSecret != nil)
        }
        context.emit(
            SignUpReport(
                userConfirmed: response.userConfirmed, userSub: response.userSub,
                codeDelivery: response.codeDeliveryDetails, username: username))
    }
}

/// `signup --output json`.
struct SignUpReport: CommandReport {
    var userConfirmed: Bool
    var userSub: String
    /// Always present: null when no code was sent.
    @Nullable var codeDelivery: CodeDeliveryDetails?
    /// For the text only.
    var username: String

    enum CodingKeys: String, CodingKey { case userConfirmed, userSub, codeDelivery }

    var textMessages: [String] {
        let user = ShellWord.quoted(username)
        if userConfirmed {
            return [
                "Account \(UntrustedText(username)) created and already confirmed; sign in with: authctl signin --username \(user)"
            ]
        } else if codeDelivery != nil {
            return [
                "Account \(UntrustedText(username)) created. A confirmation code was sent to \(CodeDeliveryText.describe(codeDelivery)).",
                "Confirm it with: authctl confirm-signup --username \(user)",
            ]
        }
        return [
            "Account \(UntrustedText(username)) created, but the pool sent no confirmation code: an administrator must confirm it."
        ]
    }
}

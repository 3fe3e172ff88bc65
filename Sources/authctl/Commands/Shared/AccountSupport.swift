import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Options the account commands (signup, confirm-signup, resend-code, forgot-password) share.
struct AccountOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The account's username (env AUTHCTL_USERNAME, or the profile's username; asked on a terminal otherwise).",
            valueName: "name"))
    var username: String?

    func validate() throws {
        if let username, username.isEmpty { throw ValidationError("--username must not be empty.") }
    }
}

/// What the account commands need: settings, the app client (with its secret when it has one,
/// which SECRET_HASH needs) and the service, made lazily so a usage error costs no set-up.
struct AccountCommandSupport {
    let context: CommandContext
    let settings: Settings
    let client: ClientSettings

    init(context: CommandContext) throws {
        self.context = context
        let session = try context.profileSession
        settings = session.settings
        client = try session.client
    }

    var console: Console { context.console }

    /// `--username`, else the configured one, else asked on the terminal.
    func username(_ options: AccountOptions) throws -> String {
        if let name = options.username ?? settings.username { return name }
        guard context.console.canPrompt else {
            throw AuthctlError(
                .usage, "no username: pass --username, set AUTHCTL_USERNAME, or set username in the profile")
        }
        guard let typed = context.console.prompt("Username: ", secret: false)?.trimmedBlanks(),
            !typed.isEmpty
        else {
            throw AuthctlError(.usage, "no username given")
        }
        return typed
    }

    /// The app client and its secret (env or keyring); no session is kept, so a missing keyring
    /// only means no stored secret.
    func appClient() throws -> AppClient {
        try context.profileSession.appClient(client, storeRequired: false)
    }

    func service() throws -> CognitoService {
        try context.service(client: client)
    }

    /// The code from the first line of standard input (`--code-stdin`), else asked on the terminal
    /// (a malformed one is asked again). Never from argv: another local user reads argv in /proc,
    /// and a reset code there let them set the password first.
    func code(fromStdin: Bool, delivery: CodeDeliveryDetails? = nil, missing: String) throws -> String {
        if fromStdin {
            guard let line = console.readLine(), !line.isEmpty else {
                throw AuthctlError(.usage, "--code-stdin: standard input held no code")
            }
            return try AccountCode.normalized(line)
        }
        guard console.canPrompt else { throw AuthctlError(.usage, missing) }
        return try typedCode(delivery: delivery)
    }

    /// Asked without echo, like a password: the code is as good as one for an hour.
    func typedCode(delivery: CodeDeliveryDetails?) throws -> String {
        let prompt = delivery?.deliveryMedium == "SMS" ? "Code from the text message: " : "Code from the email: "
        return try AccountCode.ask(console, prompt: prompt, secret: true)
    }
}

/// `--code-stdin` and what replaced `--code` for the account commands.
struct AccountCodeOptions: ParsableArguments {
    @Flag(
        help:
            "Read the code from the first line of standard input (without it, the code is asked on the terminal, not echoed)."
    )
    var codeStdin = false

    /// Kept only to say what replaced it: its value stood on argv for every local user to read.
    @Option(name: .customLong("code"), help: .hidden)
    var removedCode: String?

    func validate() throws {
        if removedCode != nil {
            throw ValidationError(Messages.codeOptionRemoved)
        }
    }
}

/// A confirmation code (the service model's ConfirmationCodeType: no white space, 1 to 2048
/// characters). Cognito sends 6 digits, which a person may write `123 456` or `123-456`.
enum AccountCode {
    static let rule = "a confirmation code has no spaces inside, e.g. 123456"

    /// Asked on the terminal until well formed (5 tries).
    static func ask(_ console: Console, prompt: String, secret: Bool) throws -> String {
        for _ in 0..<5 {
            guard let typed = console.prompt(prompt, secret: secret) else {
                throw AuthctlError(.usage, "no code given")
            }
            do {
                return try normalized(typed)
            } catch let error as AuthctlError {
                console.message("That is not a code: \(error.message); try again.")
            }
        }
        throw AuthctlError(.inputRejected, "no well-formed code after 5 tries: \(rule)")
    }

    /// The service model's bound on a confirmation code.
    static let maxLength = 2048

    static func normalized(_ code: String) throws -> String {
        // Bounded before it is scanned; each refusal says what is wrong.
        guard code.utf8.count <= maxLength else {
            throw AuthctlError(
                .inputRejected,
                "the code is \(code.utf8.count) bytes long; a confirmation code is at most \(maxLength) (Cognito sends 6 digits, e.g. 123456)"
            )
        }
        let trimmed = code.trimmedBlanks()
        guard !trimmed.isEmpty else {
            throw AuthctlError(.inputRejected, "the code is empty: give the code Cognito sent, e.g. 123456")
        }
        let digits = trimmed.filter { $0 != " " && $0 != "-" }
        if !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) { return digits }
        guard !trimmed.contains(where: { $0.isWhitespace }) else {
            throw AuthctlError(.inputRejected, rule)
        }
        return trimmed
    }
}

/// Where a code went, in words safe for a terminal: `a***@e*** (email)`.
enum CodeDeliveryText {
    static func describe(_ delivery: CodeDeliveryDetails?) -> String {
        guard let delivery, let destination = delivery.destination, !destination.isEmpty else {
            return "the address or phone number on the account"
        }
        let medium: String
        switch delivery.deliveryMedium {
        case "SMS": medium = " (text message)"
        case "EMAIL": medium = " (email)"
        default: medium = ""
        }
        return UntrustedText(destination).description + medium
    }
}

/// `--output json` of the commands that send a code.
struct CodeDeliveryReport: CommandReport {
    var username: String
    var codeDelivery: CodeDeliveryDetails?
    /// For the person: in text mode, and beside the JSON document.
    var textMessages: [String] = []
    var jsonMessages: [String] = []

    enum CodingKeys: String, CodingKey { case username, codeDelivery }

    func saying(_ text: [String], inJSON: [String] = []) -> CodeDeliveryReport {
        var report = self
        report.textMessages = text
        report.jsonMessages = inJSON
        return report
    }
}

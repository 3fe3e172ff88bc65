import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct AccountVerify: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify the signed-in user's email or phone number with a code.",
        discussion: """
            Sends a code (GetUserAttributeVerificationCode) and asks for it without echo \
            (VerifyUserAttribute). --no-send asks for a code already sent (by `account update`); \
            scripts give that code as the first line of standard input with --code-stdin, which \
            sends nothing, after `account verify ATTRIBUTE --send-only`. A code is never taken from \
            the command line, where other users of the machine can read it.
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(help: "What to verify: email or phone_number.")
    var attribute: VerifiableAttribute

    @Flag(help: "Read the code from the first line of standard input (sends no new code).")
    var codeStdin = false

    @Flag(help: "Ask for a code already sent; send no new one.")
    var noSend = false

    @Flag(help: "Only send a code (for scripts, which then give it with --code-stdin).")
    var sendOnly = false

    func validate() throws {
        if sendOnly && (codeStdin || noSend) {
            throw ValidationError("--send-only sends a code; --code-stdin and --no-send verify one already sent.")
        }
    }

    func execute(in context: CommandContext) throws {
        let sessions = try context.profileSession
        _ = try sessions.signedIn()
        let console = context.console
        if !codeStdin && !sendOnly && !console.canPrompt {
            throw AuthctlError(
                .usage,
                "no terminal to ask for the code: send one with --send-only, then give it as the first line of standard input with --code-stdin"
            )
        }

        var delivery: CodeDeliveryDetails?
        if !codeStdin && !noSend {
            delivery = try AccountSettings.write(sessions, attribute: attribute.rawValue) { session, service in
                try service.getUserAttributeVerificationCode(
                    accessToken: session.accessToken, attributeName: attribute.rawValue)
            }
            if sendOnly {
                context.emit(VerificationReport(attribute: attribute, verified: false, codeDelivery: delivery))
                return
            }
            console.message("A code was sent to \(CodeDeliveryText.describe(delivery)).")
        }

        // On a terminal a mistyped code is asked again; from standard input it is read once.
        for attempt in 1...3 {
            let code = try AccountSettings.readCode(console: console, fromStdin: codeStdin, attribute: attribute)
            let asksAgain = !codeStdin && attempt < 3
            // A mistyped code comes back as the refusal it is, to be asked again.
            let mistyped: (CognitoError) -> Bool = { asksAgain && $0.refusal == .codeMismatch }
            do {
                try AccountSettings.write(sessions, attribute: attribute.rawValue, passing: mistyped) {
                    session, service in
                    try service.verifyUserAttribute(
                        accessToken: session.accessToken, attributeName: attribute.rawValue, code: code)
                }
                context.emit(VerificationReport(attribute: attribute, verified: true, codeDelivery: delivery))
                return
            } catch let error as CognitoError where asksAgain && error.refusal == .codeMismatch {
                console.message(Messages.codeDidNotMatchTryAgain)
            }
        }
    }
}

extension VerifiableAttribute: ExpressibleByArgument {}

/// `account verify --output json`.
struct VerificationReport: CommandReport {
    var attribute: VerifiableAttribute
    var verified: Bool
    @Nullable var codeDelivery: CodeDeliveryDetails?

    var textMessages: [String] {
        if verified { return ["Your \(attribute.words) is verified."] }
        return [
            "A code was sent to \(CodeDeliveryText.describe(codeDelivery)); give it with: authctl account verify \(attribute.rawValue) --code-stdin"
        ]
    }
}

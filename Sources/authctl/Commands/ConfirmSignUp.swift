import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct ConfirmSignUp: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm-signup",
        abstract: "Confirm a new account with the code the pool sent (ConfirmSignUp).",
        discussion: """
            The code is asked on the terminal (not echoed), and asked again while it does not match; for \
            scripts, --code-stdin reads it from the first line of standard input. Never on the command line, \
            where other local users can read it. \
            A new code: `authctl resend-code --username NAME`.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    @OptionGroup var codeSource: AccountCodeOptions

    func execute(in context: CommandContext) throws {
        let support = try AccountCommandSupport(context: context)
        let username = try support.username(account)
        var answer = try support.code(
            fromStdin: codeSource.codeStdin,
            missing: "no terminal to ask for the code: give it on standard input with --code-stdin")
        let appClient = try support.appClient()
        let service = try support.service()
        // A typed code that does not match may be typed again; a --code-stdin one is the script's to fix.
        var attempts = 0
        while true {
            attempts += 1
            do {
                try service.confirmSignUp(username: username, code: answer, client: appClient)
                break
            } catch let error as CognitoError
                where error.refusal == .codeMismatch && !codeSource.codeStdin && attempts < 3
            {
                context.console.message(Messages.codeDidNotMatchTryAgain)
                answer = try support.typedCode(delivery: nil)
            } catch {
                throw AccountFailure.from(
                    error, step: .confirmSignUp, username: username, endpoint: support.client.endpoint,
                    hasSecret: appClient.clientSecret != nil)
            }
        }
        context.emit(AccountConfirmed(username: username, confirmed: true))
    }
}

/// `confirm-signup --output json`.
struct AccountConfirmed: CommandReport {
    var username: String
    var confirmed: Bool

    var textMessages: [String] {
        [
            "Account \(UntrustedText(username)) confirmed; sign in with: authctl signin --username \(ShellWord.quoted(username))"
        ]
    }
}

import ArgumentParser
import CognitoClient
import Foundation

struct ConfirmSignUp: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "confirm-signup",
        abstract: "Confirm a new account with the code the pool sent (ConfirmSignUp).",
        discussion: """
            Without --code, the code is asked on the terminal, and asked again while it does not match. \
            A new code: `authctl resend-code --username NAME`.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    @Option(help: ArgumentHelp("The confirmation code (short-lived and single-use, so the command line is acceptable).", valueName: "code"))
    var code: String?

    func validate() throws {
        if let code { _ = try AccountCode.normalized(code) }
    }

    func execute(in context: CommandContext) throws {
        let support = try AccountCommandSupport(context: context, global: global)
        let username = try support.username(account)
        var answer = try support.code(given: code, missing: "no terminal to ask for the code: pass --code CODE")
        let appClient = try support.appClient()
        let service = try support.service()
        // A typed code that does not match may be typed again; a --code one is the script's to fix.
        var attempts = 0
        while true {
            attempts += 1
            do {
                try service.confirmSignUp(username: username, code: answer, client: appClient)
                break
            } catch let error as CognitoError where error.refusal == .codeMismatch && code == nil && attempts < 3 {
                context.console.message(Messages.codeDidNotMatchTryAgain)
                answer = try support.typedCode(delivery: nil)
            } catch {
                throw AccountFailure.from(error, step: .confirmSignUp, username: username, support: support,
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
        ["Account \(OutsideText(username)) confirmed; sign in with: authctl signin --username \(ShellWord.quoted(username))"]
    }
}

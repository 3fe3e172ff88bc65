import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct ForgotPassword: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "forgot-password",
        abstract: "Reset a forgotten password with a code the pool sends (ForgotPassword, ConfirmForgotPassword).",
        discussion: """
            On a terminal: sends the code, says where it went, then asks for it and for the new password \
            twice (no echo). For scripts, in two runs: `authctl forgot-password --username NAME` sends the \
            code; `authctl forgot-password --username NAME --code-stdin --password-stdin` sets the new password, \
            with the code on the first line of standard input and the new password on the second. The code is \
            never taken from the command line, where other local users can read it. The new password is checked here (not empty, no \
            white space at either end) before it is sent; the pool's own policy is the pool's to enforce.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    /// --code-stdin: the code already received (set the new password without sending another code).
    @OptionGroup var codeSource: AccountCodeOptions

    @Flag(help: "Read the new password from standard input: its first line, or its second with --code-stdin.")
    var passwordStdin = false

    func execute(in context: CommandContext) throws {
        let support = try AccountCommandSupport(context: context)
        let console = context.console
        let username = try support.username(account)
        let user = ShellWord.quoted(username)
        let appClient = try support.appClient()
        let failure = { (error: Error) in
            AccountFailure.from(
                error, step: .forgotPassword, username: username, endpoint: support.client.endpoint,
                hasSecret: appClient.clientSecret != nil)
        }

        // Standard input: the code first (--code-stdin), then the new password (--password-stdin),
        // both read (and checked) before any request.
        let given = codeSource.codeStdin ? try support.code(fromStdin: true, missing: "") : nil
        var newPassword = passwordStdin ? try readNewPassword(console) : nil
        var answer: String
        var delivery: CodeDeliveryDetails?
        if let given {
            answer = given
        } else {
            if !console.canPrompt && newPassword != nil {
                throw AuthctlError(
                    .usage,
                    "--password-stdin sets the new password with a code already received: add --code-stdin, the code on the first line of standard input and the new password on the second (get a code first with `authctl forgot-password --username \(user)`)"
                )
            }
            do {
                delivery = try support.service().forgotPassword(username: username, client: appClient)
            } catch {
                throw failure(error)
            }
            guard console.canPrompt else {
                let text = [
                    "A code to reset the password was sent to \(CodeDeliveryText.describe(delivery)).",
                    "Then run: authctl forgot-password --username \(user) --code-stdin --password-stdin (the code, then the new password, on standard input)",
                ]
                return context.emit(
                    CodeDeliveryReport(username: username, codeDelivery: delivery).saying(text, inJSON: text))
            }
            console.message("A code to reset the password was sent to \(CodeDeliveryText.describe(delivery)).")
            answer = try support.typedCode(delivery: delivery)
        }
        let password = try newPassword ?? readNewPassword(console)
        newPassword = password

        // A typed code that does not match may be typed again (the password stays as chosen).
        var attempts = 0
        while true {
            attempts += 1
            do {
                try support.service().confirmForgotPassword(
                    username: username, code: answer, newPassword: password, client: appClient)
                break
            } catch let error as CognitoError
                where error.refusal == .codeMismatch && given == nil && console.canPrompt && attempts < 3
            {
                console.message(Messages.codeDidNotMatchTryAgain)
                answer = try support.typedCode(delivery: delivery)
            } catch {
                throw failure(error)
            }
        }
        context.emit(PasswordResetReport(username: username, passwordReset: true))
    }

    private func readNewPassword(_ console: Console) throws -> String {
        if !passwordStdin && !console.canPrompt {
            throw AuthctlError(
                .usage, "no terminal to ask for the new password: give it on standard input with --password-stdin")
        }
        return try NewPasswordReader.read(
            console: console, fromStdin: passwordStdin,
            stdinMissing: "--password-stdin: standard input held no new password")
    }
}

/// `forgot-password --output json` once the password is reset.
struct PasswordResetReport: CommandReport {
    var username: String
    var passwordReset: Bool

    var textMessages: [String] {
        ["Password reset; sign in with: authctl signin --username \(ShellWord.quoted(username))"]
    }
}

import ArgumentParser
import CognitoClient
import Foundation

struct ResendCode: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "resend-code",
        abstract: "Send a new code to confirm an account (ResendConfirmationCode); older codes stop working.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    func run(in context: CommandContext) throws {
        let support = try AccountCommandSupport(context: context, global: global)
        let username = try support.username(account)
        let appClient = try support.appClient()
        let delivery: CodeDeliveryDetails?
        do {
            delivery = try support.service().resendConfirmationCode(username: username, client: appClient)
        } catch {
            throw AccountFailure.from(error, step: .resendCode, username: username, support: support,
                                      hasSecret: appClient.clientSecret != nil)
        }
        switch global.output {
        case .json:
            context.printJSON(CodeDeliveryReport(username: username, codeDelivery: delivery))
        case .text:
            context.console.message("A new confirmation code was sent to \(CodeDeliveryText.describe(delivery)).")
            context.console.message("Confirm the account with: authctl confirm-signup --username \(ShellWord.quoted(username))")
        }
    }
}

import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct ResendCode: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "resend-code",
        abstract: "Send a new code to confirm an account (ResendConfirmationCode); older codes stop working.")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var account: AccountOptions

    func execute(in context: CommandContext) throws {
        let support = try AccountCommandSupport(context: context)
        let username = try support.username(account)
        let appClient = try support.appClient()
        let delivery: CodeDeliveryDetails?
        do {
            delivery = try support.service().resendConfirmationCode(username: username, client: appClient)
        } catch {
            throw AccountFailure.from(
                error, step: .resendCode, username: username, endpoint: support.client.endpoint,
                hasSecret: appClient.clientSecret != nil)
        }
        context.emit(
            CodeDeliveryReport(username: username, codeDelivery: delivery).saying([
                "A new confirmation code was sent to \(CodeDeliveryText.describe(delivery)).",
                "Confirm the account with: authctl confirm-signup --username \(ShellWord.quoted(username))",
            ]))
    }
}

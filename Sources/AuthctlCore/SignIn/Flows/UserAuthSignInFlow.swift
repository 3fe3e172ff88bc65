import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Choice-based sign-in (USER_AUTH): the first factor `--method` asks for, or the one chosen from
/// SELECT_CHALLENGE; the password is read only for a password factor.
package struct UserAuthSignInFlow: SignInFlow {
    package let name: String
    package let method: SignInMethod?

    package var username: String? { name }

    package func signIn(_ context: SignInContext) throws -> StoredSession {
        context.typedUsername = name
        let service = try context.service()
        let authenticator = Authenticator(service: service, client: context.appClient, now: context.now)
        let console = context.console
        let handlers = UserAuthHandlers(
            choose: { try FirstFactorChoice.choose($0, method: method, console: console) },
            password: { try context.password ?? context.readPassword(for: name) },
            respond: context.answer)
        do {
            return try context.session(
                from: authenticator.signInUserAuth(username: name, preferred: method?.factor, handlers: handlers))
        } catch is CodeDidNotMatch {
            throw AuthctlError(.notAuthorized, Messages.codeDidNotMatch)
        } catch let error as CognitoError {
            throw SignInFailure.from(error, context: context, username: name)
        }
    }

    package init(name: String, method: SignInMethod?) {
        self.name = name
        self.method = method
    }
}

/// Picks the first factor SELECT_CHALLENGE offers: `--method`, the only usable one, or the
/// person's choice on the terminal.
package enum FirstFactorChoice {
    package static func choose(_ offered: [ChallengeName], method: SignInMethod?, console: Console) throws
        -> ChallengeName
    {
        let names = offered.map { UntrustedText($0.rawValue).description }.joined(separator: ", ")
        if let method {
            guard offered.contains(method.factor.challengeName) else {
                throw AuthctlError(
                    .inputRejected, "--method \(method.rawValue) is not offered for this account; offered: \(names)")
            }
            return method.factor.challengeName
        }
        let usable = offered.compactMap(FirstFactor.init).compactMap(SignInMethod.from)
        guard !usable.isEmpty else {
            throw AuthctlError(
                .unexpected, "this account offers no way of signing in that authctl can use (offered: \(names))")
        }
        if usable.count == 1 { return usable[0].factor.challengeName }
        guard console.canPrompt else {
            throw AuthctlError(
                .usage,
                "choose how to sign in with --method: \(usable.map(\.rawValue).joined(separator: ", ")) (offered: \(names))"
            )
        }
        return try NumberedChoice.ask(
            console, heading: "Choose how to sign in:", usable, name: \.rawValue, words: \.words,
            noneChosen: "no way of signing in chosen"
        ).factor.challengeName
    }
}

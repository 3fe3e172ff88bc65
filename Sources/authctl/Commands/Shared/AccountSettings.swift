import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the signed-in account commands (`account ...`, `whoami`) share: the attributes that
/// verify an address, the verification code read from the terminal or standard input, and the
/// messages of the service's refusals.
enum AccountSettings {
    /// The attribute names a user has, unverified: an email or phone number whose `_verified` is "false".
    static func unverified(_ attributes: [String: String]) -> [String] {
        VerifiableAttribute.allCases.compactMap { attribute in
            guard let value = attributes[attribute.rawValue], !value.isEmpty,
                attributes[attribute.verifiedFlag] != "true"
            else { return nil }
            return attribute.rawValue
        }
    }

    /// A verification code: the first line of standard input (`--code-stdin`), else asked
    /// without echo on the terminal. Never taken from the command line.
    static func readCode(console: Console, fromStdin: Bool, attribute: VerifiableAttribute) throws -> String {
        if fromStdin {
            guard let line = console.readLine(), !line.trimmedBlanks().isEmpty else {
                throw AuthctlError(.usage, "--code-stdin: standard input held no code")
            }
            return try AccountCode.normalized(line)
        }
        guard console.canPrompt else {
            throw AuthctlError(
                .usage, "no terminal to ask for the code: give it as the first line of standard input with --code-stdin"
            )
        }
        let prompt = attribute == .phoneNumber ? "Code from the text message: " : "Code from the email: "
        return try AccountCode.ask(console, prompt: prompt, secret: true)
    }

    /// The message and exit code of a refused attribute change or verification (the table's
    /// `.accountChange` rows); nil leaves the error to `AuthctlError.from` (and to
    /// `withFreshSession` for the session's refusals).
    static func failure(_ error: CognitoError, attribute: String? = nil) -> AuthctlError? {
        let verifyAgain = attribute.map { "authctl account verify \($0)" } ?? "authctl account verify <attribute>"
        if let refused = RefusalTable.failure(error, at: .accountChange, RefusalFacts(newCode: verifyAgain)) {
            return refused
        }
        guard error.outcomeUnknown else { return nil }
        var failure = AuthctlError.from(error)
        failure.message +=
            "\nThe answer was lost, so the change may or may not have been made; `authctl whoami` shows the account as it is."
        return failure
    }

    /// Runs `body` (a write) and turns the service's refusals into this command's messages; the
    /// session's own refusals are `withFreshSession`'s (refresh and retry, or end the session).
    /// `passing`: refusals handed back as they are, for the command to act on (a mistyped code).
    static func write<T>(
        _ sessions: ProfileSession, attribute: String? = nil,
        passing: @escaping (CognitoError) -> Bool = { _ in false },
        _ body: (StoredSession, CognitoService) throws -> T
    ) throws -> T {
        let policy = SessionPolicy(otherRefusal: { (error: CognitoError, _: CognitoService) -> Error in
            if passing(error) { return error }
            return failure(error, attribute: attribute) ?? error
        })
        return try sessions.withFreshSession(policy: policy, body).get()
    }
}

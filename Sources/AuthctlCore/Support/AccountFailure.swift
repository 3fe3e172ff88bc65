import CognitoClient

/// The refusals of the account's sessionless calls (sign-up, its confirmation, a new code, a
/// password reset), told by the table's `.account` rows. `username` goes into the next command
/// to run.
package enum AccountFailure {
    package enum Step {
        case signUp, confirmSignUp, resendCode, forgotPassword
    }

    package static func from(_ error: Error, step: Step, username: String, endpoint: String?, hasSecret: Bool)
        -> AuthctlError
    {
        guard let error = error as? CognitoError else { return AuthctlError.from(error) }
        let user = ShellWord.quoted(username)
        let newCode =
            step == .forgotPassword
            ? "authctl forgot-password --username \(user)" : "authctl resend-code --username \(user)"
        let facts = RefusalFacts(username: username, newCode: newCode, endpoint: endpoint, hasSecret: hasSecret)
        if let refused = RefusalTable.failure(error, at: .account, facts) { return refused }
        var failure = AuthctlError.from(error, endpoint: endpoint)
        failure.message = UntrustedText(failure.message).description
        if error.outcomeUnknown {
            failure.message += "\nThe answer was lost, so the request may or may not have been carried out."
        }
        return failure
    }
}

import CognitoClient

/// The messages and exit codes of account refusals (their meaning is CognitoClient's
/// `ServiceRefusal`). `username` goes into the next command to run.
package enum AccountFailure {
    package enum Step {
        case signUp, confirmSignUp, resendCode, forgotPassword, signIn
    }

    /// A sign-in stopped by the account's state: what to run next, or nil for other failures.
    package static func signInRefusal(_ error: CognitoError, username: String) -> AuthctlError? {
        switch error.refusal {
        case .userNotConfirmed?: return notConfirmed(username: username)
        case .passwordResetRequired?: return resetRequired(username: username)
        default: return nil
        }
    }

    /// UserNotConfirmedException at sign-in (or at a password reset).
    package static func notConfirmed(username: String) -> AuthctlError {
        let user = ShellWord.quoted(username)
        return AuthctlError(
            .notAuthorized,
            "This account is not confirmed yet: confirm it with `authctl confirm-signup --username \(user)` (for a new code: `authctl resend-code --username \(user)`)"
        )
    }

    /// PasswordResetRequiredException at sign-in.
    package static func resetRequired(username: String) -> AuthctlError {
        AuthctlError(
            .notAuthorized,
            "This account must set a new password first: run `authctl forgot-password --username \(ShellWord.quoted(username))`"
        )
    }
}

import CognitoClient
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one error type commands throw: a message for the person and the documented exit code.
package struct AuthctlError: Error, CustomStringConvertible {
    package enum Code: Int32 {
        case unexpected = 1
        /// `ops`: the run stopped part-way (Ctrl-C, SIGTERM, a stop) with its checkpoint written:
        /// running the same command again finishes the rest.
        case partiallyDone = 3
        /// `ops`: every user was handled, and some failed (the audit log says which and why).
        case someFailed = 4
        case usage = 64
        case inputRejected = 65
        case unavailable = 69
        case throttled = 75
        case notAuthorized = 77
        case configuration = 78
        /// `exec`: the command exists but cannot be run (as shells report it).
        case cannotExecute = 126
        /// `exec`: no such command (as shells report it).
        case commandNotFound = 127
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { message }

    /// A failure the command's report already explained (on stdout or stderr): only its exit code
    /// is left to give, through the same error path as every other failure.
    package static func reported(_ code: Code) -> AuthctlError {
        AuthctlError(code, "")
    }

    /// The one translation of errors into a message and an exit code (used by the one `run()`,
    /// and where a command reports a failure it does not throw). Commands handle the cases that
    /// mean something particular to them (a wrong password at sign-in) before falling back to this.
    package static func from(_ error: Error, endpoint: String? = nil) -> AuthctlError {
        switch error {
        case let error as AuthctlError:
            return error
        case let error as SessionError:
            return error.failure
        case let error as CognitoError:
            return from(cognito: error, endpoint: endpoint ?? error.endpoint)
        case let error as OAuthError:
            return from(oauth: error, domain: nil)
        case let error as SecureStoreError:
            // The store's words, or with them the alternatives (ExplainedStore's advice).
            let text = error.advice ?? error.message
            switch error.cause {
            case .wrongPassphrase?:
                // As a wrong password: the file is left untouched.
                return AuthctlError(.notAuthorized, text)
            case .corrupted?, .insecure?, .blocked?, .noPassphrase?, .storeLocked?:
                return AuthctlError(.configuration, text)
            case .tooLarge?, nil:
                break
            }
            switch error.kind {
            case .unavailable, .locked, .timeout:
                return AuthctlError(.configuration, text)
            case .failed:
                return AuthctlError(.unexpected, "store error: \(error.message)")
            }
        case let error as SocketActivation.Refusal:
            // The key agent handed a socket that is not its own (systemd's unit or a wrapper).
            return AuthctlError(.configuration, error.message)
        case let error as SRPError where error.code == .libraryUnavailable:
            // libcrypto, loaded on the first sign-in (docs/performance.md), is missing: the
            // machine's set-up, as a missing libcurl or libsecret.
            return AuthctlError(.configuration, error.message)
        case let error as JWTError where error.code == .claimMismatch:
            return AuthctlError(.unavailable, Messages.tokensRefused(UntrustedText(error.message).description))
        case let error as JWTError:
            return AuthctlError(.unexpected, "the service returned an unreadable token: \(error.message)")
        default:
            return AuthctlError(.unexpected, "unexpected error: \(error)")
        }
    }

    private static func from(cognito error: CognitoError, endpoint: String?) -> AuthctlError {
        let place = endpoint.map { " at \($0)" } ?? ""
        // The service's words and error type are outside text: shown escaped, on one line.
        let said = UntrustedText(error.message)
        switch error.kind {
        case .transport:
            return AuthctlError(.unavailable, "cannot reach Cognito\(place): \(said)")
        case .malformedResponse:
            return AuthctlError(.unavailable, "Cognito\(place) gave an unusable answer: \(said)")
        case .unsupportedChallenge, .invalidInput:
            return AuthctlError(.unexpected, said.description)
        case .service:
            break
        }
        if error.isServerError && !error.isThrottling {
            return AuthctlError(.unavailable, "Cognito\(place) failed with HTTP \(error.httpStatus ?? 500): \(said)")
        }
        // Every refusal has a row at `.general` (RefusalTableTests); an answer without an error
        // type has none.
        return RefusalTable.failure(error, at: .general, RefusalFacts(endpoint: endpoint))
            ?? AuthctlError(.unexpected, RefusalSentence.unexpectedRefusal.text(error, RefusalFacts()))
    }
}

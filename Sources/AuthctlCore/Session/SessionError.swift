import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the session layer (`ProfileSession`) can end with, as values a command can act on.
/// Only `AuthctlError.from`, in the one `run()`, turns them into a message and an exit code.
package enum SessionError: Error, Equatable {
    /// No session is stored for the profile; `keptIn` names the kernel keyring when the profile is
    /// pinned there (its items are lost at reboot and after the keyring's idle expiry).
    case notSignedIn(profile: String, keptIn: String? = nil)
    /// The stored item exists but cannot be decoded (the keyring itself answered).
    case unreadable(profile: String)
    /// The service no longer accepts the session; it was removed from this device.
    case ended(profile: String, reason: String)
    /// The service ended the session, but the keyring could not remove it (`failure`: its error).
    case endedButNotRemoved(profile: String, reason: String, failure: String, code: AuthctlError.Code)
    /// The service refused the session this command used, but another process has stored a newer
    /// one meanwhile, which was kept.
    case replacedMeanwhile(profile: String, reason: String)
    /// The stored session belongs to another pool or client than the one configured now.
    case otherClient(
        profile: String, stored: (pool: String, client: String), configured: (pool: String, client: String))
    /// The app client's secret is missing or wrong (the session itself is fine and kept).
    case clientSecretRefused(serviceMessage: String)
    /// Even a freshly refreshed access token is refused as expired: the clocks disagree.
    case clockSkew(serviceMessage: String)

    /// The session cannot be used, and signing in again is the way on (`token --password-stdin`).
    package var callsForSignIn: Bool {
        switch self {
        case .notSignedIn, .unreadable, .ended, .replacedMeanwhile, .otherClient: return true
        case .endedButNotRemoved, .clientSecretRefused, .clockSkew: return false
        }
    }

    /// The session ended here or its item is unreadable (not: never signed in).
    package var endsOrUnreadable: Bool {
        switch self {
        case .ended, .unreadable: return true
        default: return false
        }
    }

    package static func == (lhs: SessionError, rhs: SessionError) -> Bool {
        lhs.failure.code == rhs.failure.code && lhs.failure.message == rhs.failure.message
    }

    /// The message and exit code.
    package var failure: AuthctlError {
        switch self {
        case .notSignedIn(let profile, let keptIn):
            return AuthctlError(.notAuthorized, Messages.notSignedIn(profile: profile, keptIn: keptIn))
        case .unreadable(let profile):
            return AuthctlError(.notAuthorized, Messages.unreadableSession(profile: profile))
        case .ended(let profile, let reason):
            return AuthctlError(.notAuthorized, Messages.sessionEnded(profile: profile, reason: reason))
        case .endedButNotRemoved(let profile, let reason, let failure, let code):
            return AuthctlError(
                code,
                """
                The session for profile \(profile) has ended (\(reason)), but it could not be removed from this \
                device: \(failure)
                """)
        case .replacedMeanwhile(let profile, let reason):
            return AuthctlError(
                .notAuthorized,
                """
                Cognito refused the session this command used (\(reason)); profile \(profile) now holds a \
                newer session, which was kept: run the command again
                """)
        case .otherClient(let profile, let stored, let configured):
            return AuthctlError(
                .notAuthorized,
                """
                the session of profile \(profile) was signed in with client \(stored.client) of \(stored.pool), \
                but client \(configured.client) of \(configured.pool) is configured; \
                run authctl signin to sign in with it (or use another --profile)
                """)
        case .clientSecretRefused(let serviceMessage):
            return AuthctlError(
                .configuration,
                """
                Cognito refused the app client's secret (\(serviceMessage)): set AUTHCTL_CLIENT_SECRET, or keep it with \
                `authctl configure --client-secret-stdin`
                """)
        case .clockSkew(let serviceMessage):
            return AuthctlError(
                .notAuthorized,
                """
                Cognito refuses even a freshly refreshed access token as expired (\(serviceMessage)); check this \
                machine's clock. The session was kept.
                """)
        }
    }
}

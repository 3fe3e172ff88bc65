import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// User-facing texts that more than one place says, or that tests compare, kept in one place.
package enum Messages {
    /// OperationNotEnabledException (`ServiceRefusal.operationNotEnabled`): the endpoint is a
    /// multi-Region pool's replica, which allows sign-in, refresh and sign-out only (or is inactive).
    package static func operationNotEnabled(endpoint: String?, said: String) -> String {
        "Cognito\(endpoint.map { " at \($0)" } ?? "") does not allow this operation in this region (OperationNotEnabledException: \(said)). "
            + "A replica region of a multi-Region user pool is read-only (sign-in, refresh and sign-out only) and an inactive one answers no user: "
            + "writes go to the pool's primary region, whose id prefixes the pool id (set --region/--endpoint to it, and the replica as --failover-region)."
    }

    package static let notThisSignIn =
        "authctl: that redirect URL is not this sign-in's (its state differs); paste the URL of this sign-in's last page, or wait for the browser"

    package static let codeOptionRemoved =
        "--code is no longer accepted here: a code on the command line can be read by every local user "
        + "(ps, /proc) and used before you. Type it at the prompt (not echoed), or give it on the first line of standard input "
        + "with --code-stdin (with --password-stdin, the new password on the second line)."

    /// Said when a sign-in replaces another user's session (another local user
    /// could have slipped their own sign-in in; a person must see it happened).
    package static func anotherUser(replacing old: StoredSession, with new: StoredSession) -> String? {
        let otherSubject = old.holder.flatMap { before in new.holder.map { $0.subject != before.subject } } ?? false
        guard old.username != new.username || otherSubject else { return nil }
        return "authctl: note: profile \(UntrustedText(new.profile)) was signed in as \(UntrustedText(old.username)); "
            + "it is now signed in as \(UntrustedText(new.username))"
    }

    /// The tokens an answer handed over are not this pool's, client's or user's (`IssuedTokens`).
    package static func tokensRefused(_ why: String) -> String {
        "refused the tokens the service returned: \(why); nothing was stored"
    }

    /// A live session whose access token lacks the self-service scope (a browser sign-in with its own --scope list).
    package static func scopeMissing(_ said: String) -> String {
        "Cognito refused the call: the session's access token does not have the scope \(ServiceRefusal.userAdminScope) (\(said)). "
            + "The session is kept and still works where that scope is not needed; to use this command, sign in with "
            + "authctl signin --browser without --scope (the default scopes include it) or with --scope \(ServiceRefusal.userAdminScope)"
    }

    package static func notSignedIn(profile: String, keptIn: String? = nil) -> String {
        let command = "authctl signin" + StoreMessages.profileFlag(profile)
        guard let keptIn else { return "Not signed in (profile \(profile)). Run: \(command)" }
        return
            "Not signed in (profile \(profile)): \(keptIn) holds no session for it; unless you signed out, it was dropped "
            + "(the kernel keyring is emptied at reboot and after its idle expiry). Run: \(command)"
    }

    package static func unreadableSession(profile: String) -> String {
        "the stored session for profile \(profile) is unreadable; run `authctl signin` to replace it"
    }

    package static func sessionEnded(profile: String, reason: String) -> String {
        "The session for profile \(profile) has ended (\(reason)); it was removed from this device. Run: authctl signin"
    }

    package static func signedInNotKept(as username: String, revoked: String, reason: String) -> String {
        "signed in at Cognito as \(UntrustedText(username)), but the session could not be kept (\(reason)): "
            + "nothing was kept on this machine, and \(revoked)"
    }

    package static func replacedNotRevoked(_ reason: String) -> String {
        "authctl: warning: the refresh token of the session this sign-in replaced could not be revoked (\(reason)); it stays usable until it expires."
    }

    package static let codeDidNotMatchTryAgain = "The code did not match; try again."
    package static let challengeExpired =
        "The sign-in took too long and its challenge expired; start again: authctl signin"
    package static let pendingCodeTooLate =
        "The sign-in took too long: its code was not given within 3 minutes; start again: authctl signin"

    package static func refreshedNotStored(_ reason: String) -> String {
        "authctl: warning: the refreshed session could not be stored (\(reason)); the next command may have to sign in again."
    }

    package static let incorrectCredentials = "Incorrect username or password"
    package static let codeDidNotMatch = "The code did not match"
    package static let tooManyAttempts = "Too many attempts; wait a few minutes and try again"
    package static let cancelled = "cancelled; nothing was changed"

    package static func keyringUnavailable(_ detail: String) -> String {
        """
        Secret Service unavailable: \(detail). Without any store, `authctl signin --no-store` prints the tokens
        """
    }
}

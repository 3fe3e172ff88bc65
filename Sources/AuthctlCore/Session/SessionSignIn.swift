import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The session layer after a sign-in: the new session replaces the old (whose refresh token is
/// revoked), or a stored one is reused (`token`).
extension ProfileSession {
    // MARK: signing in

    /// Stores a session just signed in, under the lock, so a refresh that was under way cannot
    /// overwrite it with the session it replaced. Returns the session it replaced, if readable.
    @discardableResult
    package func replace(with session: StoredSession) throws -> StoredSession? {
        try withLockedSession { locked in
            let replaced = try? locked.load()
            try locked.save(session)
            return replaced ?? nil
        }
    }

    /// Stores a session just signed in (as `replace(with:)`), then revokes the refresh token of the
    /// session it replaced: signing in again must not leave that one usable on the service for weeks
    /// while nothing here remembers it (best effort, same pool, client and endpoint only; a failure
    /// is a warning).
    package func store(signedIn session: StoredSession) throws {
        let replaced = try replace(with: session)
        if let replaced, let notice = Messages.anotherUser(replacing: replaced, with: session) {
            context.console.message(notice)
        }
        guard let replaced, replaced.refreshToken != session.refreshToken,
            replaced.userPoolId == session.userPoolId, replaced.clientId == session.clientId,
            ClientSettings.sameEndpoint(replaced.endpoint, session.endpoint)
        else { return }
        do {
            try revoke(replaced)
        } catch {
            context.console.message(Messages.replacedNotRevoked(AuthctlError.from(error).message))
        }
    }

    /// A session just signed in that the store failed to keep (it answered the check before the
    /// sign-in, then failed: a keyring locked meanwhile, a file changed under it): its refresh
    /// token is revoked, so nothing usable is left at the service that nothing here remembers,
    /// and the error says exactly that, with the store's exit code.
    func notKept(_ session: StoredSession, appClient: AppClient?, because error: Error) -> Error {
        let failure = AuthctlError.from(error)
        let revoked: String
        do {
            try revoke(session, appClient: appClient)
            revoked = "its refresh token was revoked at Cognito"
        } catch {
            revoked =
                "its refresh token could not be revoked (\(AuthctlError.from(error).message)); "
                + "it stays usable at Cognito until it expires"
        }
        return AuthctlError(
            failure.code,
            Messages.signedInNotKept(
                as: session.username, revoked: revoked,
                reason: failure.message))
    }

    /// How `token --password-stdin` gets its session: the stored one when it is fresh and of the
    /// user asked for; else a sign-in (`prepare` asks for what it needs, then `signIn` runs), under
    /// the profile's lock so that of many jobs started together on no session one signs in and the
    /// others take its session. A store that cannot keep the answer is refused before the service
    /// is asked, with `signin`'s check: a token printed from a session nothing keeps would leave a
    /// live refresh token at the service that nobody holds.
    package func signInOrReuse(
        as username: String?, minValidity: Double, prepare: () throws -> PreparedSignIn
    ) throws -> ObtainedSession {
        do {
            let (session, service) = try freshSession(minValidity: minValidity)
            // A session of another user than the one asked for is no valid session for this call.
            if username.map({ session.isSignedIn(as: $0) }) ?? true {
                return ObtainedSession(session: session, service: service)
            }
        } catch let error as SessionError where error.callsForSignIn {
            // Not signed in, the session ended, or it is another client's: sign in below.
        }
        // A read finds no file store file without asking for its passphrase: open what a write
        // needs before the service is asked.
        try store.checkCanKeep()
        let prepared = try prepare()
        return try withLockedSession { locked in
            // An unreadable item is no session: the sign-in below replaces it.
            let stored: StoredSession?
            do { stored = try locked.load() } catch SessionError.unreadable { stored = nil }
            if let current = stored, current.isSignedIn(as: prepared.username),
                !current.expiresWithin(minValidity, now: context.now()),
                (try? checkConfiguredClient(current)) != nil
            {
                return ObtainedSession(session: current, service: nil)
            }
            let fresh = try prepared.signIn()
            do {
                try locked.save(fresh)
            } catch {
                // The store answered the check, then failed: nothing is handed out.
                throw notKept(fresh, appClient: prepared.appClient, because: error)
            }
            return ObtainedSession(session: fresh, service: nil)
        }
    }
}

/// A sign-in ready to run: the user it is for, and the call that signs in.
package struct PreparedSignIn {
    package var username: String
    /// The app client the sign-in uses (to revoke its answer without reading the store again).
    package var appClient: AppClient?
    package var signIn: () throws -> StoredSession
}

/// The session `signInOrReuse` found or made. `service` is set when it came from the store.
package struct ObtainedSession {
    package var session: StoredSession
    package var service: CognitoService?
}

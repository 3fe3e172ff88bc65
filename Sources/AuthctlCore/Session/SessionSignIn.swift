import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The session layer's sign-in use cases: a sign-in (`signin`, `kube-token`, `change-password`),
/// and the stored session or a sign-in (`token --password-stdin`). Every new session, from every
/// command, is kept through one function, `keep(signedIn:from:in:)`.
extension ProfileSession {
    // MARK: a sign-in

    /// Signs in as `request` asks and keeps the session (unless `keep` is false: `--no-store`
    /// hands it out only). A store that cannot keep the answer is refused before the service is
    /// asked (a wasted sign-in, and a device registered for nothing, otherwise).
    package func signIn(_ request: SignInRequest, keep: Bool = true) throws -> SignInOutcome {
        let signIn = try SignInPipeline.prepare(request, for: self, storeRequired: keep, remembersDevices: keep)
        guard keep else { return try concluding(signIn) { try SignInPipeline.run(signIn) } }
        return try signInAndKeep(signIn, in: nil)
    }

    // MARK: the stored session, or a sign-in

    /// The stored session when its `type` token is valid for `minValidity` seconds and it is of
    /// the user asked for; else a sign-in as `request` asks, kept, under the profile's lock so
    /// that of many jobs started together on no session one signs in and the others take its
    /// session. A store that cannot keep the answer is refused before the service is asked: a
    /// token printed from a session nothing keeps would leave a live refresh token at the service
    /// that nobody holds.
    package func signInOrReuse(
        _ request: SignInRequest, minValidity: Double, for type: TokenType = .access
    ) throws -> (session: StoredSession, service: CognitoService) {
        // A sign-in may follow: without a configured app client that is the error, before any store is read.
        _ = try client
        do {
            let fresh = try freshSession(minValidity: minValidity, for: type)
            // A session of another user than the one asked for is no valid session for this call.
            if request.username.map({ fresh.session.isSignedIn(as: $0) }) ?? true { return fresh }
        } catch let error as SessionError where error.callsForSignIn {
            // Not signed in, the session ended, or it is another client's: sign in below.
        }
        // A read finds no file store file without asking for its passphrase: open what a write
        // needs before anything is asked.
        try store.checkCanKeep()
        let signIn = try SignInPipeline.prepare(request, for: self, storeRequired: true, remembersDevices: true)
        let session = try withLockedSession { locked -> StoredSession in
            // An unreadable item is no session: the sign-in below replaces it.
            let stored: StoredSession?
            do { stored = try locked.load() } catch SessionError.unreadable { stored = nil }
            if let current = stored, current.isSignedIn(as: signIn.username ?? ""),
                !expiresWithin(current, minValidity, for: type), (try? checkConfiguredClient(current)) != nil
            {
                // Another job signed in while this one waited for the lock.
                return current
            }
            return try signInAndKeep(signIn, in: locked).session()
        }
        return (session, try context.service(client: try clientSettings(for: session)))
    }

    // MARK: keeping a new session

    /// Runs `signIn` and keeps its session (`locked`: the lock the caller holds, else taken here).
    private func signInAndKeep(_ signIn: PreparedSignIn, in locked: LockedSession?) throws -> SignInOutcome {
        try store.checkCanKeep()
        // A new sign-in replaces one that was left waiting for a code.
        if !signIn.finishesPendingSignIn { store.discardPendingChallenge() }
        return try concluding(signIn) {
            let outcome = try SignInPipeline.run(signIn)
            guard case .signedIn(let session) = outcome else { return outcome }
            if let locked {
                try keep(signedIn: session, from: signIn.context, in: locked)
            } else {
                try withLockedSession { locked in try keep(signedIn: session, from: signIn.context, in: locked) }
            }
            return outcome
        }
    }

    /// The one way a new session is kept. Under the profile's lock (so a refresh under way cannot
    /// overwrite it with the session it replaced) it replaces the stored session; it says when
    /// the user changed; and it revokes the replaced session's refresh token: signing in again
    /// must not leave that one usable on the service for weeks while nothing here remembers it
    /// (best effort, same pool, client and endpoint only, with the sign-in's app client; a
    /// failure is a warning). A store that fails to keep it: its own refresh token is revoked and
    /// the error says so (`notKept`).
    func keep(signedIn session: StoredSession, from signIn: SignInContext, in locked: LockedSession) throws {
        let replaced = (try? locked.load()) ?? nil
        do {
            try locked.save(session)
        } catch {
            throw notKept(session, appClient: signIn.appClient, because: error)
        }
        guard let replaced else { return }
        if let notice = Messages.anotherUser(replacing: replaced, with: session) { context.console.message(notice) }
        guard replaced.refreshToken != session.refreshToken, replaced.userPoolId == session.userPoolId,
            replaced.clientId == session.clientId, ClientSettings.sameEndpoint(replaced.endpoint, session.endpoint)
        else { return }
        do {
            try revoke(replaced, client: signIn.client, appClient: signIn.appClient)
        } catch {
            context.console.message(Messages.replacedNotRevoked(AuthctlError.from(error).message))
        }
    }

    /// `body`, with the flow told how it ended (a browser's tab says "Signed in" only once the
    /// session is kept).
    private func concluding(_ signIn: PreparedSignIn, _ body: () throws -> SignInOutcome) throws -> SignInOutcome {
        let outcome: SignInOutcome
        do {
            outcome = try body()
        } catch {
            signIn.flow.concluded(.failure(error))
            throw error
        }
        if case .signedIn(let session) = outcome { signIn.flow.concluded(.success(session)) }
        return outcome
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
}

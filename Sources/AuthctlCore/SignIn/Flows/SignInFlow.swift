import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A way in, in one shape: start (the first factor) → challenges (each answered through the
/// `ChallengeTable`) → tokens, made into the session. It never stores: `SignInPipeline` does, for
/// every flow. A new first factor is one flow file (or one answerer, when it arrives as a
/// challenge of USER_AUTH).
package protocol SignInFlow {
    /// The user the flow signs in, when known before it starts (for reusing a stored session).
    var username: String? { get }
    func signIn(_ context: SignInContext) throws -> StoredSession
    /// Told how the sign-in ended once its session is kept, or could not be: a browser's tab says
    /// "Signed in" only then.
    func concluded(_ outcome: Result<StoredSession, Error>)
}

extension SignInFlow {
    package func concluded(_ outcome: Result<StoredSession, Error>) {}
}

/// Runs a sign-in flow and hands its session to the session layer: kept (replacing, and revoking,
/// the one before) or only handed out (`--no-store`). The one place a sign-in's result goes.
package struct SignInPipeline {
    package let context: SignInContext
    package let sessions: ProfileSession

    package init(_ context: SignInContext) {
        self.context = context
        sessions = ProfileSession(context: context.commandContext, settings: context.settings)
    }

    /// `signin`: signs in with `flow`, keeping the session unless `keep` is false.
    package func signIn(with flow: SignInFlow, keep: Bool) throws -> StoredSession {
        // A store that cannot keep the answer is refused before the service is asked (a wasted
        // sign-in, and a device registered for nothing, otherwise).
        if keep { try context.store.checkCanKeep() }
        // A new sign-in replaces one that was left waiting for a code.
        if keep && !(flow is PendingCodeFlow) { context.store.discardPendingChallenge() }
        let session: StoredSession
        do {
            session = try Self.run(flow, in: context)
            if keep {
                do {
                    try sessions.store(signedIn: session)
                } catch {
                    throw sessions.notKept(session, appClient: context.appClient, because: error)
                }
            }
        } catch {
            flow.concluded(.failure(error))
            throw error
        }
        flow.concluded(.success(session))
        return session
    }

    /// `flow` at the primary; when the primary did not answer (`Failover`) and a replica is
    /// configured, said on stderr and run once more from its start at the replica (a challenge
    /// session never crosses regions). A pending sign-in finishes where it started.
    package static func run(_ flow: SignInFlow, in context: SignInContext) throws -> StoredSession {
        do {
            return try flow.signIn(context)
        } catch {
            guard let outage = context.primaryOutage, let replica = context.client.replica, !context.atReplica,
                !(flow is PendingCodeFlow)
            else { throw error }
            context.console.message(
                Failover.notice("signing in", primary: context.client, replica: replica, because: outage))
            context.atReplica = true
            var session = try flow.signIn(context)
            session.issuingRegion = replica.region
            return session
        }
    }

    /// `token --password-stdin`/`--method`: the stored session when it is fresh and of the user
    /// asked for, else a sign-in with the flow `prepare` makes (see
    /// `ProfileSession.signInOrReuse`, which keeps it).
    package static func obtain(
        _ sessions: ProfileSession, minValidity: Double, as username: String?,
        prepare: () throws -> (SignInContext, SignInFlow)
    ) throws -> ObtainedSession {
        try sessions.signInOrReuse(as: username, minValidity: minValidity) {
            let (context, flow) = try prepare()
            return PreparedSignIn(username: flow.username ?? "", appClient: context.appClient) {
                try run(flow, in: context)
            }
        }
    }
}

/// How sign-in failures read, for every flow that talks to the user pool (the table's
/// `.signIn` rows): the same text for a wrong password and an unknown user.
package enum SignInFailure {
    package static func from(_ error: CognitoError, context: SignInContext, username: String) -> Error {
        let facts = RefusalFacts(
            username: username, endpoint: context.client.endpoint, hasSecret: context.appClient.clientSecret != nil,
            wrongCodes: context.wrongCodes)
        return RefusalTable.failure(error, at: .signIn, facts)
            ?? AuthctlError.from(error, endpoint: context.client.endpoint)
    }
}

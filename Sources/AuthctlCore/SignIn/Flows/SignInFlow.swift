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

/// A sign-in ready to run: its context (the app client reached, the store checked, the name and
/// password asked) and its flow. Made by `SignInPipeline.prepare`; run by `SignInPipeline.run`;
/// its session kept by `ProfileSession.keep(signedIn:from:in:)`.
package struct PreparedSignIn {
    package let context: SignInContext
    package let flow: SignInFlow

    /// The user it signs in, when known before it starts (a stored session of this user is reused).
    package var username: String? { flow.username }
    /// It finishes the sign-in left waiting for a code (which it must not discard first).
    var finishesPendingSignIn: Bool { flow is PendingCodeFlow }
}

/// How a sign-in ended, for the command to act on: no thrown error steers it.
package enum SignInOutcome {
    /// Signed in (and kept, unless the command keeps nothing).
    case signedIn(StoredSession)
    /// `--mfa-setup-output json`: the authenticator secret went to the script (the handout is
    /// emitted); the sign-in waits in the store for `authctl signin --code CODE`.
    case handedOverToMFASetup
    /// A code was sent that no one here can type: the sign-in waits in the store for `next`.
    case waitingForCode(destination: String?, next: String)

    /// The session, for a command that can do nothing else: a sign-in left waiting is the
    /// documented usage error (exit 64) saying what to run next.
    package func session() throws -> StoredSession {
        switch self {
        case .signedIn(let session):
            return session
        case .handedOverToMFASetup:
            // The handout on stdout and the next step on stderr already said it.
            throw AuthctlError.reported(.usage)
        case .waitingForCode(let destination, let next):
            let sentTo = destination.map { " to \(UntrustedText($0))" } ?? ""
            throw AuthctlError(.usage, "the sign-in waits for the code sent\(sentTo): within 3 minutes run \(next)")
        }
    }
}

/// Thrown through CognitoClient's challenge callback by an answerer that stopped the sign-in
/// (`SignInContext.stop`), and caught in `SignInPipeline.run` only: it never reaches a command.
struct SignInStopped: Error {}

/// Runs a prepared sign-in. The session it makes is kept by the session layer (one function,
/// `ProfileSession.keep(signedIn:from:in:)`), or only handed out (`--no-store`).
package enum SignInPipeline {
    /// The sign-in at the primary; when the primary did not answer (`Failover`) and a replica is
    /// configured, said on stderr and run once more from its start at the replica (a challenge
    /// session never crosses regions). A pending sign-in finishes where it started.
    package static func run(_ signIn: PreparedSignIn) throws -> SignInOutcome {
        let (context, flow) = (signIn.context, signIn.flow)
        context.commandContext.trace?.record(.signIn(flow: StaticWord(typeOf: flow), .primary))
        do {
            return .signedIn(try flow.signIn(context))
        } catch is SignInStopped {
            return try stopped(context)
        } catch {
            guard let outage = context.primaryOutage, let replica = context.client.replica, !context.atReplica,
                !(flow is PendingCodeFlow)
            else { throw error }
            context.console.message(
                Failover.notice("signing in", primary: context.client, replica: replica, because: outage))
            context.atReplica = true
            context.commandContext.trace?.record(
                .failover("signing in", replicaRegion: TracedText(outside: replica.region)))
            context.commandContext.trace?.record(.signIn(flow: StaticWord(typeOf: flow), .replica))
            do {
                var session = try flow.signIn(context)
                session.issuingRegion = replica.region
                return .signedIn(session)
            } catch is SignInStopped {
                return try stopped(context)
            }
        }
    }

    private static func stopped(_ context: SignInContext) throws -> SignInOutcome {
        guard let outcome = context.stopped else {
            throw AuthctlError(.unexpected, "the sign-in stopped without saying why")
        }
        return outcome
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

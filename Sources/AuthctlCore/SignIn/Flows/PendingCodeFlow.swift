import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `signin --code CODE` finishing a sign-in that waits in the store (a code sent where no one
/// could be asked, an authenticator set-up handed to a script). The pending item is removed once
/// the sign-in is done or the service has ended its challenge, never before: a wrong code or a
/// passing failure leaves it for another try within its 3 minutes.
package struct PendingCodeFlow: SignInFlow {
    package let pending: PendingChallenge
    package let code: String
    /// `--username`, which must not contradict the waiting sign-in.
    package let givenUsername: String?

    package var username: String? { pending.username }

    package func signIn(_ context: SignInContext) throws -> StoredSession {
        let profile = context.profile
        let client = context.client
        if pending.userPoolId != client.userPoolId || pending.clientId != client.clientId {
            throw AuthctlError(
                .usage,
                """
                the sign-in waiting in profile \(profile) was started with client \(pending.clientId) of \(pending.userPoolId), \
                but client \(client.clientId) of \(client.userPoolId) is configured; use the configuration it was started with, \
                or start a new sign-in with a password
                """)
        }
        // Only an explicit --username can contradict the waiting sign-in: a default one
        // (AUTHCTL_USERNAME, the profile's) must not block finishing what --username started.
        if let wanted = givenUsername, !pending.isFor(username: wanted) {
            throw AuthctlError(
                .usage,
                """
                the sign-in waiting in profile \(profile) is for \(pending.displayName), not \(wanted); \
                finish it without --username (or with --username \(pending.displayName)), or start a new sign-in with a password
                """)
        }
        if pending.isExpired(now: context.now()) {
            context.store.discardPendingChallenge()
            throw AuthctlError(.notAuthorized, Messages.pendingCodeTooLate)
        }
        context.typedUsername = pending.typedUsername
        context.wrongCodes = pending.wrongCodes
        context.canSetNewPassword = false
        do {
            let session = try finish(context)
            context.store.discardPendingChallenge()
            if pending.challengeName == .mfaSetup {
                context.console.message("Authenticator app set up; it will be asked for at every sign-in.")
            }
            return session
        } catch is CodeDidNotMatch {
            var updated = pending
            updated.wrongCodes += 1
            try? context.store.keep(updated)
            throw AuthctlError(
                .notAuthorized,
                "The code did not match; the sign-in still waits: try another code with \(PendingChallenge.nextCommand(profile: profile)) before \(Format.localTime(pending.expiresAt))"
            )
        }
    }

    /// Throws `CodeDidNotMatch` for a wrong code (the challenge lives on); removes the pending item
    /// when the service has ended its session.
    private func finish(_ context: SignInContext) throws -> StoredSession {
        let service = try context.service()
        let authenticator = Authenticator(service: service, client: context.appClient, now: context.now)
        // The device the first run sent (if any) was accepted; a new one may come with the tokens.
        let confirmingDevice = { (result: SignInResult) -> StoredSession in
            context.devices?.afterSignIn(
                result, sent: nil, typedName: pending.displayName, userPoolId: context.client.userPoolId,
                service: service)
            return try context.session(from: result)
        }
        do {
            if pending.challengeName == .mfaSetup {
                var session = pending.session
                if !pending.verified {
                    let verified: VerifySoftwareTokenResponse
                    do {
                        verified = try service.verifySoftwareToken(
                            session: pending.session,
                            code: try OneTimeCode.normalized(code, format: .authenticator),
                            friendlyName: AuthenticatorEnrolment.friendlyName)
                    } catch let error as CognitoError where error.refusal == .codeMismatch {
                        throw CodeDidNotMatch()
                    }
                    guard verified.status == nil || verified.status == "SUCCESS" else { throw CodeDidNotMatch() }
                    session = verified.session ?? pending.session
                    // Only the challenge's answer is left; should it fail in passing, the next
                    // run answers with this session instead of verifying again.
                    var updated = pending
                    updated.session = session
                    updated.verified = true
                    try? context.store.keep(updated)
                }
                let challenge = AuthChallenge(
                    name: .mfaSetup, parameters: [:], username: pending.username, session: session)
                return try confirmingDevice(
                    authenticator.resume(
                        challenge, with: ChallengeAnswer(responses: [:], session: session),
                        respond: context.answer))
            }
            guard let field = pending.challengeName.codeField else {
                throw CognitoError.unsupportedChallenge(pending.challengeName)
            }
            var parameters: [String: String] = [:]
            parameters["CODE_DELIVERY_DESTINATION"] = pending.destination
            let challenge = AuthChallenge(
                name: pending.challengeName, parameters: parameters, username: pending.username,
                session: pending.session)
            return try confirmingDevice(
                authenticator.resume(
                    challenge, with: [field: try OneTimeCode.normalized(code, format: .delivered)],
                    respond: context.answer))
        } catch let error as CognitoError where error.refusal == .codeMismatch {
            throw CodeDidNotMatch()
        } catch let error as CognitoError {
            if error.refusal?.endsChallenge ?? false { context.store.discardPendingChallenge() }
            throw SignInFailure.from(error, context: context, username: pending.username)
        }
    }

    package init(pending: PendingChallenge, code: String, givenUsername: String?) {
        self.pending = pending
        self.code = code
        self.givenUsername = givenUsername
    }
}

extension PendingChallenge {
    /// `authctl signin --code CODE`, with the profile when it is not the default one.
    package static func nextCommand(profile: String) -> String {
        profile == Defaults.profile ? "authctl signin --code CODE" : "authctl signin --profile \(profile) --code CODE"
    }
}

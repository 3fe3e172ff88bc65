import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// SMS_MFA, EMAIL_OTP, SMS_OTP: a code the service sent. Where no one can be asked for it, the
/// sign-in waits in the store for `authctl signin --code CODE` (`PendingCodeFlow`) rather than
/// start over later and send another code.
package struct DeliveredCodeAnswerer: ChallengeAnswerer {
    package func answer(_ challenge: AuthChallenge, in context: SignInContext) throws -> ChallengeAnswer {
        let name = challenge.name
        let destination = challenge.parameters["CODE_DELIVERY_DESTINATION"]
        if challenge.attempt == 1 {
            context.console.message(
                "Code sent to \(destination.map { UntrustedText($0).description } ?? "your \(name == .emailOTP ? "email address" : "phone")")"
            )
            if context.request.mfa.mfaCode == nil && !context.console.canPrompt {
                try keepWaiting(challenge, destination: destination, in: context)
            }
        }
        let prompt = name == .emailOTP ? "Code from the email: " : "Code from the text message: "
        return [name.codeField!: try OneTimeCode.answer(challenge, in: context, prompt: prompt, format: .delivered)]
    }

    private func keepWaiting(_ challenge: AuthChallenge, destination: String?, in context: SignInContext) throws
        -> Never
    {
        let sentTo = destination.map { " to \(UntrustedText($0))" } ?? ""
        guard let session = challenge.session else {
            throw AuthctlError(
                .usage, "this sign-in needs the code sent\(sentTo): pass --code CODE, or run on a terminal")
        }
        let pending = PendingChallenge(
            challengeName: challenge.name, session: session, username: challenge.username,
            typedUsername: context.typedUsername.flatMap { $0 == challenge.username ? nil : $0 },
            userPoolId: context.client.userPoolId, clientId: context.client.clientId,
            expiresAt: context.now().addingTimeInterval(180),
            destination: destination, verified: false, wrongCodes: 0)
        do {
            try context.store.keep(pending)
        } catch let error as SecureStoreError {
            // Another run would start another sign-in and send another code, so --code with
            // this one can never match: only a terminal or a store can help.
            throw AuthctlError(
                .configuration,
                """
                this sign-in needs the code sent\(sentTo), and without the Secret Service (\(error.message)) it cannot wait \
                for a second run (which would send a new code): run it on a terminal, or where a Secret Service is reachable
                """)
        }
        throw context.stop(
            .waitingForCode(destination: destination, next: PendingChallenge.nextCommand(profile: context.profile)))
    }
}

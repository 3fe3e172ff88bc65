import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// MFA_SETUP: the account must set up an authenticator app before it signs in. On a terminal the
/// secret is shown and the first code checked; with `--mfa-setup-output json` the secret goes to
/// the script and the sign-in waits in the store for `authctl signin --code CODE`.
package struct AuthenticatorSetupAnswerer: ChallengeAnswerer {
    package func answer(_ challenge: AuthChallenge, in context: SignInContext) throws -> ChallengeAnswer {
        let offered = challenge.factorsToSetUp
        if !offered.isEmpty, !offered.contains(.softwareTokenMFA) {
            throw AuthctlError(
                .unexpected,
                "this pool requires setting up \(UntrustedText(offered.map(\.rawValue).joined(separator: ", "))), which authctl cannot do yet; only authenticator apps are supported"
            )
        }
        let next = PendingChallenge.nextCommand(profile: context.profile)
        // --mfa-setup-output json is honoured on a terminal too: the script asked for it.
        let handOver = context.request.setupOutput != nil
        if !handOver && !context.console.canPrompt {
            throw AuthctlError(
                .usage,
                "this account must set up an authenticator app first: run on a terminal, or pass --mfa-setup-output json and then finish with `\(next)`"
            )
        }
        if handOver {
            // The second process finds the challenge in the store: check it is there before the
            // service hands out a secret that would go nowhere.
            do {
                try context.store.checkCanKeep()
            } catch let error as SecureStoreError {
                throw AuthctlError(
                    .configuration,
                    """
                    --mfa-setup-output json: finishing the authenticator set-up in a second process \
                    (`authctl signin --code CODE`) keeps the challenge in the Secret Service, which cannot be reached \
                    (\(error.message)); run authctl signin on a terminal instead
                    """)
            }
        }
        let service = try context.service()
        let association = try service.associateSoftwareToken(session: challenge.session)
        let label = context.typedUsername ?? challenge.username
        let uri = AuthenticatorURI.otpauth(
            secret: association.secretCode, username: label, issuer: context.client.userPoolId)
        let session = association.session ?? challenge.session ?? ""

        if handOver {
            let expiresAt = context.now().addingTimeInterval(180)
            try context.store.keep(
                PendingChallenge(
                    challengeName: .mfaSetup, session: session, username: challenge.username,
                    typedUsername: context.typedUsername.flatMap { $0 == challenge.username ? nil : $0 },
                    userPoolId: context.client.userPoolId, clientId: context.client.clientId, expiresAt: expiresAt,
                    destination: nil, verified: false, wrongCodes: 0))
            context.commandContext.emit(
                MFASetupHandout(
                    secretCode: association.secretCode, otpauthUri: uri, username: challenge.username,
                    expiresAt: expiresAt, next: next))
            throw context.stop(.handedOverToMFASetup)
        }

        try AuthenticatorEnrolment.show(secret: association.secretCode, uri: uri, context: context.commandContext)
        let verified = try AuthenticatorEnrolment.verify(context: context.commandContext) { code in
            try service.verifySoftwareToken(
                session: session, code: code, friendlyName: AuthenticatorEnrolment.friendlyName)
        }
        return ChallengeAnswer(responses: [:], session: verified.session ?? session)
    }
}

/// `--mfa-setup-output json`: always a JSON document on stdout (the script asked for it), with
/// the next step said on stderr.
package struct MFASetupHandout: CommandReport {
    package var secretCode: String
    package var otpauthUri: String
    package var username: String
    package var expiresAt: Date
    package var next: String

    package enum CodingKeys: String, CodingKey { case secretCode, otpauthUri, username, expiresAt, next }

    package var document: String? { Format.json(self) }
    package var textMessages: [String] { [Self.nextStep(next)] }
    package var jsonMessages: [String] { [Self.nextStep(next)] }

    package static func nextStep(_ next: String) -> String {
        "The authenticator secret is on stdout. Add it to the app, then within 3 minutes run: \(next)"
    }
}

/// Showing a new authenticator secret and checking the first code, shared by sign-in's
/// MFA_SETUP and `authctl mfa setup`.
package enum AuthenticatorEnrolment {
    /// The device name the authenticator is registered under.
    package static var friendlyName: String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0 ? String(cString: name) : "this machine"
        return "authctl on \(host)"
    }

    package static func show(secret: String, uri: String, context: CommandContext) throws {
        let console = context.console
        console.message("Set up your authenticator app: scan this QR code, or enter the secret by hand.")
        let colors = context.environment["NO_COLOR"] == nil && console.messagesGoToTerminal
        let code: TerminalQRCode
        do {
            code = try TerminalQRCode(encoding: uri)
        } catch let failure as TerminalQRCode.Failure {
            // A missing libqrencode is the machine's set-up, as a missing libfido2 or libsecret.
            throw AuthctlError(failure.libraryUnavailable ? .configuration : .unexpected, failure.description)
        }
        console.drawing(code.render(colors: colors))
        console.message("Secret (Base32): \(secret)")
        console.message("URI: \(uri)")
        if !colors {
            console.message(
                "(The QR code is drawn without colours, for a dark background: on a light one it shows inverted, which some apps cannot scan; then enter the secret.)"
            )
        }
    }

    /// Asks for the app's first code until the service accepts one (3 codes; a malformed one is
    /// asked again without being sent). `send` throws `CodeDidNotMatch` or the service's
    /// CodeMismatchException / EnableSoftwareTokenMFAException for a wrong code.
    package static func verify(context: CommandContext, _ send: (String) throws -> VerifySoftwareTokenResponse) throws
        -> VerifySoftwareTokenResponse
    {
        for attempt in 1...3 {
            let code = try OneTimeCode.typed(
                console: context.console, prompt: "Code from the app: ", format: .authenticator)
            do {
                let result = try send(code)
                if result.status == nil || result.status == "SUCCESS" { return result }
            } catch let error as CognitoError where error.refusal == .codeMismatch {
            } catch is CodeDidNotMatch {
            }
            if attempt < 3 { context.console.message("The code did not match; wait for the next one and try again.") }
        }
        throw AuthctlError(.notAuthorized, "The code did not match three times; start again")
    }
}

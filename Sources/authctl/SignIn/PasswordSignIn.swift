import CognitoClient
import Foundation
import LocalFormats

/// Signing in with a password, shared by `signin` and `token --password-stdin`.
struct PasswordSignIn {
    let context: CommandContext
    let settings: Settings
    let client: ClientSettings
    let appClient: AppClient
    let passwordFromStdin: Bool
    /// The command's own parsed MFA options (never a default-constructed, unparsed one).
    let mfa: MFAOptions
    var setupOutput: MFASetupOutput? = nil
    /// Remembered devices (nil: none sent, none confirmed).
    var devices: RememberedDevices? = nil
    /// Codes refused in earlier runs of a pending sign-in.
    var wrongCodesBefore = 0

    static func readPassword(console: Console, fromStdin: Bool, username: String) throws -> String {
        let password: String?
        if fromStdin {
            password = console.readLine()
        } else {
            password = console.prompt("Password for \(username): ", secret: true)
        }
        guard let password, !password.isEmpty else {
            throw AuthctlError(.usage, fromStdin ? "--password-stdin: standard input held no password" : "no password given")
        }
        return password
    }

    func signIn(username: String, password: String, flow: PasswordFlow) throws -> SignInResult {
        let service = try context.service(settings, client: client)
        let authenticator = Authenticator(service: service, client: appClient, now: context.now)
        let responder = ChallengeResponder(context: context, settings: settings, client: client, service: service,
                                           mfa: mfa, setupOutput: setupOutput, typedUsername: username,
                                           newPassword: { try readNewPassword(console: context.console, currentPassword: password) })
        let device = devices?.forSignIn(userPoolId: client.userPoolId, typedName: username, profile: settings.profile)
        // A device the service refused is dropped whether or not the sign-in made without it succeeds.
        defer { if let device, authenticator.refusedDevice != nil { devices?.discard(device, during: "sign-in") } }
        do {
            let result = try authenticator.signIn(username: username, password: password, flow: flow, device: device?.credentials,
                                                  respond: responder.answer)
            devices?.afterSignIn(result, sent: device, typedName: username, userPoolId: client.userPoolId, service: service)
            return result
        } catch is CodeDidNotMatch {
            throw AuthctlError(.notAuthorized, "The code did not match")
        } catch let error as CognitoError {
            if let refused = AccountFailure.signInRefusal(error, username: username) { throw refused }
            throw Self.signInFailure(error, client: client, hasSecret: appClient.clientSecret != nil, wrongCodes: responder.log.wrongCodes)
        }
    }

    /// Finishes a sign-in that waits in the Secret Service (see `PendingChallenge`) with `code`.
    /// Throws `CodeDidNotMatch` for a wrong code (the challenge lives on); removes the pending
    /// item when the service has ended its session.
    func finishPending(_ pending: PendingChallenge, code: String, profile: String) throws -> SignInResult {
        let service = try context.service(settings, client: client)
        let authenticator = Authenticator(service: service, client: appClient, now: context.now)
        let responder = ChallengeResponder(context: context, settings: settings, client: client, service: service,
                                           mfa: mfa, typedUsername: pending.typedUsername,
                                           newPassword: { throw AuthctlError(.usage, "a new password cannot be set here; run authctl signin") })
        responder.log.wrongCodes = wrongCodesBefore
        // The device the first run sent (if any) was accepted; a new one may come with the tokens.
        let confirmingDevice = { (result: SignInResult) -> SignInResult in
            devices?.afterSignIn(result, sent: nil, typedName: pending.displayName, userPoolId: client.userPoolId, service: service)
            return result
        }
        do {
            if pending.challengeName == .mfaSetup {
                var session = pending.session
                if !pending.verified {
                    let verified: VerifySoftwareTokenResponse
                    do {
                        verified = try service.verifySoftwareToken(session: pending.session,
                                                                   code: try ChallengeResponder.normalized(code, format: .authenticator),
                                                                   friendlyName: ChallengeResponder.friendlyName)
                    } catch let error as CognitoError where AuthenticatorEnrolment.isMismatch(error) {
                        throw CodeDidNotMatch()
                    }
                    guard verified.status == nil || verified.status == "SUCCESS" else { throw CodeDidNotMatch() }
                    session = verified.session ?? pending.session
                    // Only the challenge's answer is left; should it fail in passing, the next
                    // run answers with this session instead of verifying again.
                    var kept = pending
                    kept.session = session
                    kept.verified = true
                    try? kept.save(context.store, profile: profile)
                }
                let challenge = AuthChallenge(name: .mfaSetup, parameters: [:], username: pending.username, session: session)
                return try confirmingDevice(authenticator.resume(challenge, with: ChallengeAnswer(responses: [:], session: session),
                                                                 respond: responder.answer))
            }
            guard let field = pending.challengeName.codeField else {
                throw CognitoError.unsupportedChallenge(pending.challengeName)
            }
            var parameters: [String: String] = [:]
            parameters["CODE_DELIVERY_DESTINATION"] = pending.destination
            let challenge = AuthChallenge(name: pending.challengeName, parameters: parameters, username: pending.username,
                                          session: pending.session)
            return try confirmingDevice(authenticator.resume(challenge, with: [field: try ChallengeResponder.normalized(code, format: .delivered)],
                                                             respond: responder.answer))
        } catch let error as CognitoError where AuthenticatorEnrolment.isMismatch(error) {
            throw CodeDidNotMatch()
        } catch let error as CognitoError {
            if error.refusal?.endsChallenge ?? false { PendingChallenge.discard(context.store, profile: profile) }
            throw Self.signInFailure(error, client: client, hasSecret: appClient.clientSecret != nil, wrongCodes: responder.log.wrongCodes)
        }
    }

    func readNewPassword(console: Console, currentPassword: String?) throws -> String {
        if !passwordFromStdin { console.message("This account must choose a new password.") }
        return try NewPasswordReader.read(console: console, fromStdin: passwordFromStdin, current: currentPassword,
                                          stdinMissing: "this account must set a new password: give it as the second line of standard input")
    }

    /// Sign-in failures a person can act on; the same text for a wrong password and an unknown user.
    static func signInFailure(_ error: CognitoError, client: ClientSettings, hasSecret: Bool, wrongCodes: Int = 0) -> AuthctlError {
        switch error.refusal {
        case .secretHashRejected?:
            return AuthctlError(.configuration, hasSecret
                ? "the app client secret was refused (\(error.message)); check AUTHCTL_CLIENT_SECRET or `authctl configure --client-secret-stdin`"
                : "this app client has a secret: set AUTHCTL_CLIENT_SECRET or store it with `authctl configure --client-secret-stdin` (\(error.message))")
        case .attemptsExceeded?:
            return AuthctlError(.throttled, "Too many attempts; wait a few minutes and try again")
        case .codeMismatch?:
            return AuthctlError(.notAuthorized, "The code did not match")
        case .challengeSessionEnded?:
            // The service ends a challenge after a few wrong codes, and then says only this.
            return AuthctlError(.notAuthorized, wrongCodes > 0
                ? "Too many wrong codes: Cognito ended this sign-in; start the sign-in again: authctl signin"
                : "Cognito no longer accepts this sign-in's challenge; start again: authctl signin")
        case .challengeSessionExpired?, .codeExpired?:
            return AuthctlError(.notAuthorized, Messages.challengeExpired)
        case .userNotFound?:
            return AuthctlError(.notAuthorized, "Incorrect username or password")
        default:
            if error.isNotAuthorized { return AuthctlError(.notAuthorized, "Incorrect username or password") }
        }
        return AuthctlError.from(error, endpoint: client.endpoint)
    }
}

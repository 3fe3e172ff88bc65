import CognitoClient

/// Where a refusal came. One refusal reads differently at each: "Incorrect username or password."
/// is the password at a sign-in, the current password at `change-password` and the IAM identity
/// at an operator's call.
package enum RefusalStep: CaseIterable, Sendable {
    /// Any call: what the refusal means by itself (`AuthctlError.from`, and every step's fallback).
    case general
    /// A sign-in's first factor and its challenges.
    case signIn
    /// The account's calls made without a session: sign-up, its confirmation, a new code, a password reset.
    case account
    /// A signed-in account's attribute change or verification (`account ...`).
    case accountChange
    /// ChangePassword.
    case changePassword
    /// An operator's IAM-signed admin call (`ops`, `signout --user`, `devices --user`).
    case ops
}

/// What a sentence names besides the service's own words; each step's caller fills what it knows.
package struct RefusalFacts: Sendable {
    /// The account the call was for (named in the next command to run).
    package var username = ""
    /// The pool of an operator's call.
    package var poolId = ""
    /// The command that sends a new code, for an expired one.
    package var newCode = ""
    /// The endpoint called, for the sentences that say where.
    package var endpoint: String?
    /// A client secret was sent (it was refused), rather than none (one is needed).
    package var hasSecret = false
    /// Wrong codes already typed in this sign-in.
    package var wrongCodes = 0

    package init(
        username: String = "", poolId: String = "", newCode: String = "", endpoint: String? = nil,
        hasSecret: Bool = false, wrongCodes: Int = 0
    ) {
        self.username = username
        self.poolId = poolId
        self.newCode = newCode
        self.endpoint = endpoint
        self.hasSecret = hasSecret
        self.wrongCodes = wrongCodes
    }
}

/// Every sentence a refusal is told with, each written once. The service's message and error
/// type are outside text: interpolated escaped (`UntrustedText`), on one line.
package enum RefusalSentence: CaseIterable, Sendable {
    case serviceSaid
    case unexpectedRefusal
    case tooManyRequests
    case resetRequiredSaid
    case notConfirmedSaid
    case unknownPoolOrClient
    case scopeMissing
    case requestRefused
    case passkeysNotAllowed
    case passkeyConfigurationMissing
    case passkeyChallengeGone
    case passkeyOtherRelyingParty
    case passkeyOriginRefused
    case passkeyOtherClient
    case passkeyNotAccepted
    case webACLRefused
    case operationNotEnabled
    case incorrectCredentials
    case secretRefused
    case tooManyAttempts
    case codeDidNotMatch
    case challengeEnded
    case challengeExpired
    case notConfirmed
    case resetRequired
    case aliasTaken
    case usernameTaken
    case passwordRefused
    case codeDidNotMatchLatest
    case codeExpired
    case tooManyAttemptsSaid
    case codeNotSent
    case noSuchAccount
    case alreadyConfirmed
    case changeRefused
    case currentPasswordIncorrect
    case noSuchUserInPool
    case awsCredentialsRefused

    package func text(_ error: CognitoError, _ facts: RefusalFacts) -> String {
        let said = UntrustedText(error.message)
        let user = ShellWord.quoted(facts.username)
        switch self {
        case .serviceSaid:
            return said.description
        case .unexpectedRefusal:
            return "\(UntrustedText(error.errorType ?? "error")) from Cognito: \(said)"
        case .tooManyRequests:
            return "Too many requests; wait a few minutes and try again (\(said))"
        case .resetRequiredSaid:
            return "A password reset is required for this account: \(said)"
        case .notConfirmedSaid:
            return "This account is not confirmed yet: \(said)"
        case .unknownPoolOrClient:
            return "Cognito does not know this user pool or app client: \(said)"
        case .scopeMissing:
            return Messages.scopeMissing(said.description)
        case .requestRefused:
            return "Cognito refused the request: \(said)"
        case .passkeysNotAllowed:
            return "this user pool does not allow passkeys (WebAuthnNotEnabledException): \(said)"
        case .passkeyConfigurationMissing:
            return "this user pool has no passkey relying party or domain configured: \(said)"
        case .passkeyChallengeGone:
            return
                "Cognito no longer knows this passkey challenge (it expired or was used): run the command again (\(said))"
        case .passkeyOtherRelyingParty:
            return "the passkey is for another relying party than this user pool's: \(said)"
        case .passkeyOriginRefused:
            return "Cognito refused the origin authctl sent (https://<relying party>): \(said)"
        case .passkeyOtherClient:
            return "the passkey registration was started with another app client: \(said)"
        case .passkeyNotAccepted:
            return "Cognito does not accept this security key's passkey: \(said)"
        case .webACLRefused:
            return "the user pool's web ACL refused the request: \(said)"
        case .operationNotEnabled:
            return Messages.operationNotEnabled(endpoint: facts.endpoint, said: said.description)
        case .incorrectCredentials:
            return Messages.incorrectCredentials
        case .secretRefused:
            return facts.hasSecret
                ? "the app client secret was refused (\(said)); check AUTHCTL_CLIENT_SECRET or `authctl configure --client-secret-stdin`"
                : "this app client has a secret: set AUTHCTL_CLIENT_SECRET or store it with `authctl configure --client-secret-stdin` (\(said))"
        case .tooManyAttempts:
            return Messages.tooManyAttempts
        case .codeDidNotMatch:
            return Messages.codeDidNotMatch
        case .challengeEnded:
            // The service ends a challenge after a few wrong codes, and then says only this.
            return facts.wrongCodes > 0
                ? "Too many wrong codes: Cognito ended this sign-in; start the sign-in again: authctl signin"
                : "Cognito no longer accepts this sign-in's challenge; start again: authctl signin"
        case .challengeExpired:
            return Messages.challengeExpired
        case .notConfirmed:
            return
                "This account is not confirmed yet: confirm it with `authctl confirm-signup --username \(user)` (for a new code: `authctl resend-code --username \(user)`)"
        case .resetRequired:
            return "This account must set a new password first: run `authctl forgot-password --username \(user)`"
        case .aliasTaken:
            return "Another account already uses this email address or phone number: \(said)"
        case .usernameTaken:
            return
                "An account named \(UntrustedText(facts.username)) already exists; sign in with `authctl signin --username \(user)`, or reset its password with `authctl forgot-password --username \(user)`"
        case .passwordRefused:
            return "The pool refused the password: \(said)"
        case .codeDidNotMatchLatest:
            return "The code did not match; try again with the code from the latest message"
        case .codeExpired:
            return "The code has expired (or a newer one was sent since); get a new code with `\(facts.newCode)`"
        case .tooManyAttemptsSaid:
            return "Too many attempts; wait a few minutes and try again (\(said))"
        case .codeNotSent:
            return "The pool could not send the code: \(said)"
        case .noSuchAccount:
            return "This pool has no account named \(UntrustedText(facts.username))"
        case .alreadyConfirmed:
            return
                "The account \(UntrustedText(facts.username)) is already confirmed: no code is needed; sign in with `authctl signin --username \(user)`"
        case .changeRefused:
            return "The pool refused the change: \(said)"
        case .currentPasswordIncorrect:
            return "Current password is incorrect"
        case .noSuchUserInPool:
            return "no user \(facts.username) in \(facts.poolId): \(said)"
        case .awsCredentialsRefused:
            return "the service refused the AWS credentials: \(UntrustedText(error.errorType ?? "")): \(said)"
        }
    }
}

/// One row of the table: the exit code and the sentence of one refusal at one step.
package struct RefusalEntry: Sendable, Equatable {
    package let code: AuthctlError.Code
    package let sentence: RefusalSentence
    /// At this step the refusal is not the session's: `endsSession` says no though CognitoClient's
    /// says yes (a plain NotAuthorizedException at ChangePassword is the current password).
    package var keepsSession = false
}

/// The one table of refusal messages: for each step, the refusals it tells its own way, with
/// their exit codes; a refusal a step does not list is told as `.general` tells it. What a
/// refusal means is CognitoClient's (`ServiceRefusal`); how it is said and which code it exits
/// with is decided here, once.
package enum RefusalTable {
    /// The refusals that say the credentials, a token or the session were refused.
    private static let denials = ServiceRefusal.allCases.filter(\.deniesAuthorization)

    private static func rows(
        _ refusals: [ServiceRefusal], _ code: AuthctlError.Code, _ sentence: RefusalSentence,
        keepsSession: Bool = false
    ) -> [ServiceRefusal: RefusalEntry] {
        Dictionary(
            uniqueKeysWithValues: refusals.map {
                ($0, RefusalEntry(code: code, sentence: sentence, keepsSession: keepsSession))
            })
    }

    /// Later rows win over earlier ones: a group first, then its particular members.
    private static func table(_ groups: [ServiceRefusal: RefusalEntry]...) -> [ServiceRefusal: RefusalEntry] {
        groups.reduce(into: [:]) { table, group in table.merge(group) { _, later in later } }
    }

    package static let general = table(
        rows(ServiceRefusal.allCases, .unexpected, .unexpectedRefusal),
        rows(denials, .notAuthorized, .serviceSaid),
        rows([.throttled], .throttled, .tooManyRequests),
        rows([.userNotFound], .notAuthorized, .serviceSaid),
        rows([.passwordResetRequired], .notAuthorized, .resetRequiredSaid),
        rows([.userNotConfirmed], .notAuthorized, .notConfirmedSaid),
        rows([.invalidPassword, .codeMismatch, .codeExpired], .inputRejected, .serviceSaid),
        rows([.resourceNotFound], .configuration, .unknownPoolOrClient),
        rows([.scopeMissing], .notAuthorized, .scopeMissing),
        rows([.invalidParameter, .poolConfiguration], .configuration, .requestRefused),
        rows([.webAuthnNotEnabled], .configuration, .passkeysNotAllowed),
        rows([.webAuthnConfigurationMissing], .configuration, .passkeyConfigurationMissing),
        rows([.webAuthnChallengeNotFound], .notAuthorized, .passkeyChallengeGone),
        rows([.webAuthnRelyingPartyMismatch], .configuration, .passkeyOtherRelyingParty),
        rows([.webAuthnOriginNotAllowed], .configuration, .passkeyOriginRefused),
        rows([.webAuthnClientMismatch], .configuration, .passkeyOtherClient),
        rows([.webAuthnCredentialNotSupported], .inputRejected, .passkeyNotAccepted),
        rows([.forbidden], .notAuthorized, .webACLRefused),
        rows([.operationNotEnabled], .configuration, .operationNotEnabled))

    package static let signIn = table(
        rows(denials, .notAuthorized, .incorrectCredentials),
        rows([.userNotFound], .notAuthorized, .incorrectCredentials),
        rows([.secretHashRejected], .configuration, .secretRefused),
        rows([.attemptsExceeded], .throttled, .tooManyAttempts),
        rows([.codeMismatch], .notAuthorized, .codeDidNotMatch),
        rows([.challengeSessionEnded], .notAuthorized, .challengeEnded),
        rows([.challengeSessionExpired, .codeExpired], .notAuthorized, .challengeExpired),
        rows([.userNotConfirmed], .notAuthorized, .notConfirmed),
        rows([.passwordResetRequired], .notAuthorized, .resetRequired))

    /// What the account's sessionless calls and the signed-in account changes share.
    private static let codes = table(
        rows([.aliasExists], .inputRejected, .aliasTaken),
        rows([.codeMismatch], .notAuthorized, .codeDidNotMatchLatest),
        rows([.codeExpired], .notAuthorized, .codeExpired),
        rows([.throttled, .attemptsExceeded], .throttled, .tooManyAttemptsSaid),
        rows([.codeDeliveryFailed], .unavailable, .codeNotSent))

    package static let account = table(
        codes,
        rows([.usernameExists], .inputRejected, .usernameTaken),
        rows([.invalidPassword], .inputRejected, .passwordRefused),
        rows([.userNotConfirmed], .notAuthorized, .notConfirmed),
        rows([.passwordResetRequired], .notAuthorized, .resetRequired),
        rows([.secretHashRejected], .configuration, .secretRefused),
        rows([.userNotFound], .notAuthorized, .noSuchAccount),
        // As confirm-signup's refusal of a confirmed account (NotAuthorizedException): 77.
        rows([.userAlreadyConfirmed], .notAuthorized, .alreadyConfirmed))

    package static let accountChange = table(
        codes,
        rows([.invalidParameter], .inputRejected, .changeRefused))

    package static let changePassword = table(
        rows(denials, .notAuthorized, .currentPasswordIncorrect),
        // A plain NotAuthorizedException here is the current password, not the session.
        rows([.notAuthorized], .notAuthorized, .currentPasswordIncorrect, keepsSession: true),
        rows([.throttled], .throttled, .tooManyAttempts),
        rows([.invalidPassword, .invalidParameter], .inputRejected, .serviceSaid))

    package static let ops = table(
        // For a signed admin operation NotAuthorizedException too means the IAM identity may not do it.
        rows(denials + [.awsCredentialsRefused], .notAuthorized, .awsCredentialsRefused),
        rows([.userNotFound], .inputRejected, .noSuchUserInPool))

    package static func rows(at step: RefusalStep) -> [ServiceRefusal: RefusalEntry] {
        switch step {
        case .general: return general
        case .signIn: return signIn
        case .account: return account
        case .accountChange: return accountChange
        case .changePassword: return changePassword
        case .ops: return ops
        }
    }

    /// The step's own row for `refusal`; nil when the step tells it as `.general` does.
    package static func entry(_ refusal: ServiceRefusal, at step: RefusalStep) -> RefusalEntry? {
        rows(at: step)[refusal]
    }

    /// The step's message and exit code for a refusal it tells its own way; nil for anything
    /// else (the caller falls back to `AuthctlError.from`, which is `.general`).
    package static func failure(_ error: CognitoError, at step: RefusalStep, _ facts: RefusalFacts = RefusalFacts())
        -> AuthctlError?
    {
        guard let refusal = error.refusal, let entry = entry(refusal, at: step) else { return nil }
        return AuthctlError(entry.code, entry.sentence.text(error, facts))
    }

    /// Whether the refusal ends the session at this step: CognitoClient's `endsSession`, unless
    /// the step's row keeps it.
    package static func endsSession(_ error: CognitoError, at step: RefusalStep) -> Bool {
        guard error.endsSession else { return false }
        return !(error.refusal.flatMap { entry($0, at: step) }?.keepsSession ?? false)
    }

    /// Of refusals from several regions for one call, the one that decides: one that ends the
    /// session, else an access token refused as expired (refreshed and asked again), else the first.
    package static func deciding(_ errors: [CognitoError]) -> CognitoError? {
        errors.first(where: \.endsSession) ?? errors.first { $0.refusal == .accessTokenExpired } ?? errors.first
    }
}

import CognitoClient

/// Answers one kind of challenge: from what the person gave up front, or by asking them.
package protocol ChallengeAnswerer: Sendable {
    func answer(_ challenge: AuthChallenge, in context: SignInContext) throws -> ChallengeAnswer
}

/// Which answerer answers which challenge: the one table of the challenges a person answers
/// (PASSWORD_VERIFIER and the device challenges are answered inside CognitoClient). A new
/// challenge is one file with its `ChallengeAnswerer` and one entry here (docs/architecture.md).
package enum ChallengeTable {
    package static let answerers: [ChallengeName: any ChallengeAnswerer] = [
        .newPasswordRequired: NewPasswordAnswerer(),
        .softwareTokenMFA: AuthenticatorCodeAnswerer(),
        .smsMFA: DeliveredCodeAnswerer(),
        .emailOTP: DeliveredCodeAnswerer(),
        .smsOTP: DeliveredCodeAnswerer(),
        .selectMFAType: FactorChoiceAnswerer(),
        .mfaSetup: AuthenticatorSetupAnswerer(),
        .webAuthn: WebAuthnAnswerer(),
    ]

    /// The names CognitoClient knows that no answerer here answers, and why: a test checks that
    /// every `ChallengeName.known` is in one of the two tables.
    package static let notAnsweredHere: [ChallengeName: String] = [
        .passwordVerifier: "answered inside CognitoClient (SRP)",
        .deviceSRPAuth: "answered inside CognitoClient (remembered device)",
        .devicePasswordVerifier: "answered inside CognitoClient (remembered device)",
        .selectChallenge: "the first factor of USER_AUTH: UserAuthSignInFlow chooses it",
        .password: "a first factor of USER_AUTH, sent with SELECT_CHALLENGE",
        .passwordSRP: "a first factor of USER_AUTH, sent with SELECT_CHALLENGE",
        .customChallenge: "not supported: a Lambda-defined challenge (said as unsupported)",
    ]

    package static func answer(_ challenge: AuthChallenge, in context: SignInContext) throws -> ChallengeAnswer {
        let answerer = answerers[challenge.name]
        context.commandContext.trace?.record(
            .challenge(
                TracedText(outside: challenge.name.rawValue),
                answerer: answerer.map { StaticWord(typeOf: $0) } ?? StaticWord("unsupported")))
        guard let answerer else { throw CognitoError.unsupportedChallenge(challenge.name) }
        return try answerer.answer(challenge, in: context)
    }
}

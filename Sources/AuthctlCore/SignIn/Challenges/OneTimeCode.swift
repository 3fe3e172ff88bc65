import CognitoClient

/// How a one-time code looks. The service model: VerifySoftwareToken's UserCode is `[0-9]{6}`;
/// challenge answers are free strings, and Cognito sends 6-digit SMS codes and 6- or 8-digit
/// email codes: no code of any kind has 7 digits, so a 7-digit one is refused before anything
/// is sent, as a 5-digit one is.
package enum CodeFormat {
    /// An authenticator app's code: 6 digits.
    case authenticator
    /// A code sent by text message (6 digits) or email (6 or 8).
    case delivered
    /// Not known yet (a code given before the challenge is seen): any of these.
    case any

    package init(_ type: MFAType?) {
        switch type {
        case .totp?: self = .authenticator
        case .sms?, .email?: self = .delivered
        case nil: self = .any
        }
    }

    package func allows(digits: Int) -> Bool {
        switch self {
        case .authenticator: return digits == 6
        case .delivered, .any: return digits == 6 || digits == 8
        }
    }

    package var rule: String {
        switch self {
        case .authenticator: return "a code from the authenticator app is 6 digits, e.g. 123456"
        case .delivered: return "the code sent to you is 6 digits (8 in some emails), e.g. 123456"
        case .any:
            return
                "a code from the authenticator app is 6 digits, one sent by text message 6 and by email 6 or 8, e.g. 123456"
        }
    }
}

/// A one-time code the service refused where no one can be asked for another.
package struct CodeDidNotMatch: Error {
    package init() {}
}

/// Reading and checking one-time codes, shared by the code answerers, a pending sign-in and
/// `mfa setup`.
package enum OneTimeCode {
    /// The digits of a code as a person may write it (`123 456`, `123-456`), checked against `format`.
    package static func normalized(_ code: String, format: CodeFormat = .any) throws -> String {
        // A person writes a code in a few characters: anything long is not one (and is not scanned).
        guard code.utf8.count <= 64 else { throw AuthctlError(.inputRejected, format.rule) }
        let digits = code.filter { !$0.isWhitespace && $0 != "-" }
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), format.allows(digits: digits.count) else {
            throw AuthctlError(.inputRejected, format.rule)
        }
        return digits
    }

    /// Asks until the person types a well-formed code (nothing is sent for a typo).
    package static func typed(console: Console, prompt: String, format: CodeFormat) throws -> String {
        for _ in 0..<5 {
            guard let typed = console.prompt(prompt, secret: false) else {
                throw AuthctlError(.usage, "no code given")
            }
            do {
                return try normalized(typed, format: format)
            } catch let error as AuthctlError {
                console.message("That is not a code: \(error.message); try again.")
            }
        }
        throw AuthctlError(.inputRejected, "no well-formed code after 5 tries: \(format.rule)")
    }

    /// The code for `challenge`: `--code` first, then the terminal; after a mismatch only the terminal.
    package static func answer(
        _ challenge: AuthChallenge, in context: SignInContext, prompt: String, format: CodeFormat
    ) throws -> String {
        let console = context.console
        if challenge.attempt > 1 {
            context.wrongCodes += 1
            guard console.canPrompt else { throw CodeDidNotMatch() }
            console.message(Messages.codeDidNotMatchTryAgain)
        } else if let given = context.request.mfa.mfaCode {
            do {
                return try normalized(given, format: format)
            } catch let error as AuthctlError where console.canPrompt {
                console.message("--code: \(error.message).")
            }
        } else if !console.canPrompt {
            throw AuthctlError(
                .usage, "this sign-in needs a one-time code (\(challenge.name)): pass --code CODE, or run on a terminal"
            )
        }
        return try typed(console: console, prompt: prompt, format: format)
    }
}

/// SOFTWARE_TOKEN_MFA: the authenticator app's code.
package struct AuthenticatorCodeAnswerer: ChallengeAnswerer {
    package func answer(_ challenge: AuthChallenge, in context: SignInContext) throws -> ChallengeAnswer {
        [
            challenge.name.codeField!: try OneTimeCode.answer(
                challenge, in: context, prompt: "Authenticator code: ", format: .authenticator)
        ]
    }
}

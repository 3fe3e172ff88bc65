import CognitoClient

/// NEW_PASSWORD_REQUIRED: the account must choose a new password before it signs in.
package struct NewPasswordAnswerer: ChallengeAnswerer {
    package func answer(_ challenge: AuthChallenge, in context: SignInContext) throws -> ChallengeAnswer {
        ["NEW_PASSWORD": try context.readNewPassword()]
    }
}

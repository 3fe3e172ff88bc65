import CognitoClient

/// SELECT_MFA_TYPE: which second factor to receive the code by (`--mfa-type`, the only one
/// offered, or the person's choice).
package struct FactorChoiceAnswerer: ChallengeAnswerer {
    package func answer(_ challenge: AuthChallenge, in context: SignInContext) throws -> ChallengeAnswer {
        let offered = challenge.factorsToChoose.compactMap(MFAType.init(challengeName:))
        guard !offered.isEmpty else {
            throw CognitoError.malformed("SELECT_MFA_TYPE offered no factor", status: 200)
        }
        let names = offered.map(\.rawValue).joined(separator: ", ")
        let chosen: MFAType
        if let wanted = context.request.mfa.mfaType {
            guard offered.contains(wanted) else {
                throw AuthctlError(
                    .inputRejected, "--mfa-type \(wanted.rawValue) is not offered for this account; offered: \(names)")
            }
            chosen = wanted
        } else if offered.count == 1 {
            chosen = offered[0]
        } else {
            guard context.console.canPrompt else {
                throw AuthctlError(.usage, "choose a second factor with --mfa-type: \(names)")
            }
            chosen = try NumberedChoice.ask(
                context.console, heading: "Choose how to receive your sign-in code:", offered,
                name: \.rawValue, words: \.words, noneChosen: "no factor chosen")
        }
        return ["ANSWER": chosen.challengeName.rawValue]
    }
}

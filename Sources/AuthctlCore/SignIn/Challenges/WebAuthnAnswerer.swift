import CognitoClient

/// WEB_AUTHN: a getAssertion on the security key over CREDENTIAL_REQUEST_OPTIONS, answered with
/// CREDENTIAL = the AuthenticationResponseJSON (whether asked for with `--method passkey`, chosen
/// from SELECT_CHALLENGE, or the account's only way in).
package struct WebAuthnAnswerer: ChallengeAnswerer {
    package func answer(_ challenge: AuthChallenge, in context: SignInContext) throws -> ChallengeAnswer {
        guard let text = challenge.parameters["CREDENTIAL_REQUEST_OPTIONS"],
            let options = WebAuthnRequestOptions.from(json: text)
        else {
            throw CognitoError.malformed("WEB_AUTHN came without usable CREDENTIAL_REQUEST_OPTIONS", status: 200)
        }
        let settings = context.settings
        let key = SecurityKeyUse(
            choice: context.request.securityKey, console: context.console,
            environment: context.commandContext.environment,
            relyingParty: RelyingPartyPin(settings: settings),
            verificationNeededBecause: settings.passkeyMFA
                ? "passkey MFA is on for profile \(settings.profile) (`authctl mfa enable passkey`, passkey_mfa in \(settings.configFile)): a passkey sign-in counts as MFA only with user verification"
                : nil)
        return ["CREDENTIAL": try key.authenticate(options).text]
    }
}

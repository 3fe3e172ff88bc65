import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A password sign-in (USER_SRP_AUTH or USER_PASSWORD_AUTH), with a remembered device.
package struct PasswordSignInFlow: SignInFlow {
    package let name: String
    package let flow: PasswordFlow

    package var username: String? { name }

    package func signIn(_ context: SignInContext) throws -> StoredSession {
        context.typedUsername = name
        let password = try context.password ?? context.readPassword(for: name)
        let service = try context.service()
        let authenticator = Authenticator(service: service, client: context.appClient, now: context.now)
        let devices = context.devices
        let device = devices?.forSignIn(
            userPoolId: context.client.userPoolId, typedName: name, profile: context.profile)
        // A device the service refused is dropped whether or not the sign-in made without it succeeds.
        defer { if let device, authenticator.refusedDevice != nil { devices?.discard(device, during: "sign-in") } }
        do {
            let result = try authenticator.signIn(
                username: name, password: password, flow: flow, device: device?.credentials,
                respond: context.answer)
            devices?.afterSignIn(
                result, sent: device, typedName: name, userPoolId: context.client.userPoolId, service: service)
            return try context.session(from: result)
        } catch is CodeDidNotMatch {
            throw AuthctlError(.notAuthorized, Messages.codeDidNotMatch)
        } catch let error as CognitoError {
            throw SignInFailure.from(error, context: context, username: name)
        }
    }

    package init(name: String, flow: PasswordFlow) {
        self.name = name
        self.flow = flow
    }
}

import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Remembered devices around a sign-in and a refresh: which device to send, confirming a new
/// one (ConfirmDevice with a fresh device password), remembering it, and dropping one the
/// service no longer knows. A keyring or service failure here never fails the sign-in: it is
/// said, and the sign-in goes on as on a device that is not remembered.
package struct RememberedDevices {
    package let context: CommandContext
    /// `--remember-device`: remember without asking when the pool leaves it to the user.
    package var rememberWithoutAsking = false

    /// This machine's devices are kept with the profile's items (keyed by pool and user).
    package let store: ProfileStore

    package init(context: CommandContext, profile: String, rememberWithoutAsking: Bool = false) {
        self.context = context
        self.store = context.profileStore(profile)
        self.rememberWithoutAsking = rememberWithoutAsking
    }

    /// The device to sign `typedName` in with: found by the name typed, or through the
    /// profile's stored session when that name is one of its user's aliases.
    package func forSignIn(userPoolId: String, typedName: String, profile: String) -> StoredDevice? {
        do {
            if let device = try store.device(userPoolId: userPoolId, name: typedName) { return device }
            if let session = (try? store.session()) ?? nil, session.userPoolId == userPoolId,
                session.isSignedIn(as: typedName)
            {
                return try store.device(userPoolId: userPoolId, name: session.username)
            }
        } catch {
            context.console.message(
                "authctl: warning: this device's remembered key could not be read (\(AuthctlError.from(error).message)); signing in without it."
            )
        }
        return nil
    }

    /// The device whose key goes with a refresh of `username`'s session, or nil.
    package func device(userPoolId: String, username: String) -> StoredDevice? {
        (try? store.device(userPoolId: userPoolId, name: username)) ?? nil
    }

    /// The service refused `device` (forgotten elsewhere, or its password no longer matches): delete it here and say so.
    package func discard(_ device: StoredDevice, during what: String) {
        var removed = "it was removed from this machine"
        do {
            // Only while the store still holds that device: a new one may have replaced it meanwhile.
            if let current = try store.device(userPoolId: device.userPoolId, name: device.username),
                current.deviceKey == device.deviceKey
            {
                try store.forget(current)
            }
        } catch {
            removed = "it could not be removed from this machine (\(AuthctlError.from(error).message))"
        }
        context.console.message(
            "authctl: Cognito refused this machine's remembered device \(device.deviceKey) (forgotten from another device, or its key no longer matches): \(removed), and the \(what) was made without it."
        )
    }

    /// After a sign-in: a new device (NewDeviceMetadata) is confirmed and kept; a known one that
    /// is not remembered is remembered when asked to. (A refused one is the caller's to discard.)
    package func afterSignIn(
        _ result: SignInResult, sent: StoredDevice?, typedName: String, userPoolId pool: String,
        service: CognitoService
    ) {
        let accessToken = result.tokens.accessToken
        let username = (try? JWTClaims(token: accessToken))?.username ?? result.username
        do {
            if let metadata = result.tokens.newDeviceMetadata, let key = metadata.deviceKey,
                let group = metadata.deviceGroupKey
            {
                try confirm(
                    deviceKey: key, groupKey: group, userPoolId: pool, username: username, typedName: typedName,
                    accessToken: accessToken, service: service)
            } else if var known = sent, result.refusedDevice == nil, !known.remembered, rememberWithoutAsking {
                try service.updateDeviceStatus(accessToken: accessToken, deviceKey: known.deviceKey, remembered: true)
                known.remembered = true
                try store.keep(known)
                context.console.message(
                    "This device is now remembered: later sign-ins of \(username) skip MFA where the pool allows it.")
            }
        } catch let error as DeviceNotKept {
            context.console.message(error.notice)
        } catch {
            context.console.message(
                "authctl: warning: this device could not be registered with Cognito (\(AuthctlError.from(error).message)); the next sign-in will ask for MFA again."
            )
        }
    }

    private func confirm(
        deviceKey: String, groupKey: String, userPoolId: String, username: String, typedName: String,
        accessToken: String, service: CognitoService
    ) throws {
        let password = DeviceSRP.newDevicePassword()
        let verifier = try DeviceSRP.verifierConfig(
            deviceGroupKey: groupKey, deviceKey: deviceKey, devicePassword: password)
        let name = "authctl on \(Self.hostName())"
        let answer = try service.confirmDevice(
            accessToken: accessToken, deviceKey: deviceKey, verifier: verifier, deviceName: name)
        var remembered = !(answer.userConfirmationNecessary ?? false)
        if !remembered && wantsRemembering() {
            try service.updateDeviceStatus(accessToken: accessToken, deviceKey: deviceKey, remembered: true)
            remembered = true
        }
        let alias = typedName.lowercased()
        let device = StoredDevice(
            userPoolId: userPoolId, username: username, deviceKey: deviceKey, deviceGroupKey: groupKey,
            devicePassword: password, deviceName: name, remembered: remembered, confirmedAt: context.now(),
            aliases: alias == username.lowercased() ? [] : [alias])
        // A device kept before for this user (refused, or replaced by the service) is replaced whole.
        do {
            try store.keep(device)
        } catch {
            // Confirmed at Cognito but kept nowhere here: no later sign-in could use it, so it
            // is forgotten at Cognito again rather than left there as an orphan.
            throw DeviceNotKept(
                reason: error,
                forgotten: Result { try service.forgetDevice(accessToken: accessToken, deviceKey: deviceKey) })
        }
        if remembered {
            context.console.message(
                "This device is remembered as \"\(name)\": later sign-ins of \(username) skip MFA where the pool allows it."
            )
        } else {
            context.console.message(
                "This device is registered as \"\(name)\" but not remembered: sign in with --remember-device to skip MFA next time."
            )
        }
    }

    private func wantsRemembering() -> Bool {
        if rememberWithoutAsking { return true }
        guard context.console.canPrompt else { return false }
        let answer = context.console.prompt("Remember this device, so later sign-ins skip MFA? [y/N] ", secret: false)
        return ["y", "yes"].contains(answer?.trimmedBlanks().lowercased() ?? "")
    }

    package static func hostName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "this machine" }
        let name = String(cString: buffer)
        return name.isEmpty ? "this machine" : name
    }
}

/// A device Cognito confirmed that the store then failed to keep, and whether it was forgotten
/// at Cognito again.
private struct DeviceNotKept: Error {
    var reason: Error
    var forgotten: Result<Void, Error>

    var notice: String {
        let outcome: String
        switch forgotten {
        case .success:
            outcome = "it was forgotten at Cognito again"
        case .failure(let error):
            outcome =
                "it could not be forgotten at Cognito (\(AuthctlError.from(error).message)): "
                + "remove it with `authctl devices forget`"
        }
        return "authctl: warning: Cognito registered this device, but it could not be kept on this machine "
            + "(\(AuthctlError.from(reason).message)); \(outcome). The next sign-in will ask for MFA again."
    }
}

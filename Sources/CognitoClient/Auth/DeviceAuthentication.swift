#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The device half of a sign-in with a remembered device: DEVICE_SRP_AUTH (SRP_A of a fresh
/// device SRP client) and DEVICE_PASSWORD_VERIFIER (the claim signed with the device password).
final class DeviceSignIn {
    static let challenges: Set<ChallengeName> = [.deviceSRPAuth, .devicePasswordVerifier]

    let device: DeviceCredentials
    let now: () -> Date
    private var srp: SRPClient?

    init(device: DeviceCredentials, now: @escaping () -> Date) {
        self.device = device
        self.now = now
    }

    /// The responses to `name` (USERNAME and SECRET_HASH are the authenticator's to add).
    func answer(_ name: ChallengeName, parameters: [String: String]) throws -> [String: String] {
        do {
            if name == .deviceSRPAuth {
                let client = try SRPClient(deviceGroupKey: device.deviceGroupKey)
                srp = client
                return ["DEVICE_KEY": device.deviceKey, "SRP_A": client.srpAHex]
            }
            guard let srp else {
                throw CognitoError.malformed("DEVICE_PASSWORD_VERIFIER challenge before DEVICE_SRP_AUTH", status: 200)
            }
            guard let salt = parameters["SALT"], let srpB = parameters["SRP_B"],
                let secretBlock = parameters["SECRET_BLOCK"]
            else {
                throw CognitoError.malformed(
                    "DEVICE_PASSWORD_VERIFIER challenge without SALT, SRP_B or SECRET_BLOCK", status: 200)
            }
            let timestamp = SRPTimestamp.string(for: now())
            // The user SRP with DeviceGroupKey for the pool name and DeviceKey for the user.
            let signature = try srp.passwordClaimSignature(
                userIdForSRP: device.deviceKey, password: device.devicePassword, saltHex: salt, srpBHex: srpB,
                secretBlock: secretBlock, timestamp: timestamp)
            return [
                "DEVICE_KEY": device.deviceKey,
                "PASSWORD_CLAIM_SECRET_BLOCK": secretBlock,
                "PASSWORD_CLAIM_SIGNATURE": signature,
                "TIMESTAMP": timestamp,
            ]
        } catch let error as SRPError {
            throw CognitoError.invalidInput("the service's device SRP parameters were refused: \(error.message)")
        }
    }

    /// Sends one device answer. The service refusing it refuses this device (its key is unknown,
    /// or the device password no longer matches its verifier), not the user's password.
    func send(_ request: () throws -> AuthResponse) throws -> AuthResponse {
        do {
            return try request()
        } catch let error as CognitoError where error.isNotAuthorized || error.refusal == .resourceNotFound {
            throw DeviceRefused(error: error)
        }
    }
}

/// The service refused the remembered device during a sign-in.
struct DeviceRefused: Error {
    let error: CognitoError
}

/// New tokens from a refresh that sent a remembered device's key.
public struct DeviceRefresh: Sendable {
    public var tokens: AuthenticationResult
    /// The service no longer knows the device: the refresh was made again without its key.
    public var deviceRefused: Bool
}

extension Authenticator {
    /// Runs `signIn` with `device`; when the service refuses the device (ResourceNotFoundException
    /// anywhere, or any refusal of the device's own SRP answers), runs it once more without it
    /// and says so in `refusedDevice`. Should the second run meet ResourceNotFoundException as
    /// well, the device was not the cause: the first error is thrown.
    func withDeviceFallback(
        _ device: DeviceCredentials,
        _ signIn: (DeviceCredentials?) throws -> SignInResult
    ) throws -> SignInResult {
        let refusal: CognitoError
        do {
            return try signIn(device)
        } catch let refused as DeviceRefused {
            refusal = refused.error
        } catch let error as CognitoError where error.refusal == .resourceNotFound {
            refusal = error
        }
        refusedDevice = device
        do {
            var result = try signIn(nil)
            result.refusedDevice = device
            return result
        } catch let again as CognitoError
            where again.refusal == .resourceNotFound && refusal.refusal == .resourceNotFound
        {
            refusedDevice = nil
            throw refusal
        }
    }

    /// `refresh` sending the remembered device's key (DEVICE_KEY, or DeviceKey). A key the
    /// service no longer knows (ResourceNotFoundException) is dropped and the refresh made
    /// again without it, which `deviceRefused` reports.
    public func refresh(refreshToken: String, username: String, device deviceKey: String?) throws -> DeviceRefresh {
        guard let deviceKey else {
            return DeviceRefresh(
                tokens: try refresh(refreshToken: refreshToken, username: username), deviceRefused: false)
        }
        do {
            return DeviceRefresh(
                tokens: try refresh(refreshToken: refreshToken, username: username, deviceKey: deviceKey),
                deviceRefused: false)
        } catch let error as CognitoError where error.refusal == .resourceNotFound {
            do {
                return DeviceRefresh(
                    tokens: try refresh(refreshToken: refreshToken, username: username), deviceRefused: true)
            } catch let again as CognitoError where again.refusal == .resourceNotFound {
                throw error
            }
        }
    }
}

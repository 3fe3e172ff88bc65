#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a remembered device keeps: the keys Cognito handed out in NewDeviceMetadata and the
/// random password whose SRP verifier was registered with ConfirmDevice.
public struct DeviceCredentials: Sendable, Equatable {
    public var deviceKey: String
    public var deviceGroupKey: String
    public var devicePassword: String

    public init(deviceKey: String, deviceGroupKey: String, devicePassword: String) {
        self.deviceKey = deviceKey
        self.deviceGroupKey = deviceGroupKey
        self.devicePassword = devicePassword
    }
}

/// The registration half of Cognito's device SRP, as the AWS SDKs and Amplify compute it
/// (amazon-cognito-identity-js `AuthenticationHelper.generateHashDevice`):
///
/// - device password: 40 random bytes, base64
/// - salt: 16 random bytes read as a number, pad(salt) as in the user SRP
/// - x = H(pad(salt) | H(DeviceGroupKey | DeviceKey | ":" | password)), verifier = g^x mod N
/// - ConfirmDevice gets `Salt` = base64(pad(salt)) and `PasswordVerifier` = base64(pad(verifier))
///
/// Signing in with the device (DEVICE_SRP_AUTH, then DEVICE_PASSWORD_VERIFIER) is the user SRP
/// with DeviceGroupKey for the pool name and DeviceKey for the user: `SRPClient(deviceGroupKey:)`.
public enum DeviceSRP {
    /// A new random device password (40 bytes from the system CSPRNG, base64).
    public static func newDevicePassword() -> String {
        Data(randomBytes(40)).base64EncodedString()
    }

    /// The DeviceSecretVerifierConfig for ConfirmDevice, with a fresh random salt.
    public static func verifierConfig(
        deviceGroupKey: String, deviceKey: String,
        devicePassword: String
    ) throws -> DeviceSecretVerifierConfig {
        try verifierConfig(
            deviceGroupKey: deviceGroupKey, deviceKey: deviceKey, devicePassword: devicePassword,
            saltBytes: randomBytes(16))
    }

    /// The same with a fixed salt, for test vectors.
    static func verifierConfig(
        deviceGroupKey: String, deviceKey: String, devicePassword: String,
        saltBytes: [UInt8]
    ) throws -> DeviceSecretVerifierConfig {
        guard !deviceGroupKey.isEmpty, !deviceKey.isEmpty else {
            throw SRPError(code: .invalidDeviceKey, message: "the service sent an empty DeviceKey or DeviceGroupKey")
        }
        let group = try SRPGroup()
        let salt = try BigNum.fromBytes(saltBytes)
        let identity = SRPClient.sha256(Array("\(deviceGroupKey)\(deviceKey):\(devicePassword)".utf8))
        let x = try BigNum.fromBytes(SRPClient.sha256(salt.paddedBytes + identity), constantTime: true)
        let verifier = try group.g.modPow(x, modulus: group.n, group.montgomery, BNContext())
        return DeviceSecretVerifierConfig(
            passwordVerifier: Data(verifier.paddedBytes).base64EncodedString(),
            salt: Data(salt.paddedBytes).base64EncodedString())
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &random) }
    }
}

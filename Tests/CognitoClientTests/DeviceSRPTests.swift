import BigInt
import Foundation
import XCTest

@testable import CognitoClient

/// Device SRP (remembered devices) against SRPVerifier, the independent server written with
/// attaswift BigInt: the verifier registered with ConfirmDevice and the DEVICE_PASSWORD_VERIFIER
/// signature must be what the service computes.
final class DeviceSRPTests: XCTestCase {
    private let groupKey = "-dKJg9zRf"
    private let deviceKey = "eu-west-1_0f5c7a9e-1b2d-4c3e-8f4a-5b6c7d8e9f01"

    private func decode(_ base64: String) throws -> [UInt8] {
        try XCTUnwrap(Data(base64Encoded: base64).map(Array.init), "not base64: \(base64)")
    }

    func testVerifierIsGToTheXComputedIndependently() throws {
        let saltBytes: [UInt8] = (0..<16).map { UInt8(($0 * 37 + 11) % 128) }  // high bit clear: no padding byte
        let config = try DeviceSRP.verifierConfig(
            deviceGroupKey: groupKey, deviceKey: deviceKey,
            devicePassword: "device-password", saltBytes: saltBytes)
        let salt = BigUInt(Data(saltBytes))
        XCTAssertEqual(try decode(config.salt), SRPVerifier.padHexBytes(salt))
        // x = H(pad(salt) | H(DeviceGroupKey | DeviceKey | ":" | password)), v = g^x mod N
        let identity = SRPVerifier.sha256(Array("\(groupKey)\(deviceKey):device-password".utf8))
        let x = BigUInt(Data(SRPVerifier.sha256(SRPVerifier.padHexBytes(salt) + identity)))
        let expected = SRPVerifier.modPow(SRPVerifier.g, x)
        XCTAssertEqual(try decode(config.passwordVerifier), SRPVerifier.padHexBytes(expected))
    }

    func testSaltAndVerifierArePaddedAsCognitosPadHex() throws {
        var saltBytes = [UInt8](repeating: 0x42, count: 16)
        saltBytes[0] = 0x9A  // high bit set: padHex puts a 00 byte in front
        let config = try DeviceSRP.verifierConfig(
            deviceGroupKey: groupKey, deviceKey: deviceKey,
            devicePassword: "pw", saltBytes: saltBytes)
        XCTAssertEqual(try decode(config.salt), [0] + saltBytes)
        let verifier = try decode(config.passwordVerifier)
        XCTAssertEqual(
            verifier, SRPVerifier.padHexBytes(BigUInt(Data(verifier))), "verifier bytes are padHex of the value")
    }

    func testDevicePasswordIsFortyRandomBytes() throws {
        let first = DeviceSRP.newDevicePassword()
        let second = DeviceSRP.newDevicePassword()
        XCTAssertEqual(try decode(first).count, 40)
        XCTAssertNotEqual(first, second)
    }

    func testEmptyKeysAreRefused() {
        XCTAssertThrowsError(
            try DeviceSRP.verifierConfig(deviceGroupKey: "", deviceKey: deviceKey, devicePassword: "pw"))
        XCTAssertThrowsError(
            try DeviceSRP.verifierConfig(deviceGroupKey: groupKey, deviceKey: "", devicePassword: "pw"))
        XCTAssertThrowsError(try SRPClient(deviceGroupKey: "")) { error in
            XCTAssertEqual((error as? SRPError)?.code, .invalidDeviceKey)
        }
    }

    /// Registers a device as ConfirmDevice would, then signs in with `password` as
    /// DEVICE_SRP_AUTH / DEVICE_PASSWORD_VERIFIER do; true when the server accepts the claim.
    private func deviceSignIn(registeredWith registered: String, password: String, deviceKey signedKey: String? = nil)
        throws -> Bool
    {
        let config = try DeviceSRP.verifierConfig(
            deviceGroupKey: groupKey, deviceKey: deviceKey, devicePassword: registered)
        let server = SRPVerifier(
            deviceGroupKey: groupKey, deviceKey: deviceKey,
            salt: BigUInt(Data(try decode(config.salt))), verifier: BigUInt(Data(try decode(config.passwordVerifier))))
        let client = try SRPClient(deviceGroupKey: groupKey)
        let challenge = try server.challenge(srpAHex: client.srpAHex)
        let timestamp = SRPTimestamp.string(for: Date())
        let signature = try client.passwordClaimSignature(
            userIdForSRP: signedKey ?? deviceKey, password: password, saltHex: challenge.saltHex,
            srpBHex: challenge.srpBHex,
            secretBlock: challenge.secretBlock, timestamp: timestamp)
        return try server.verify(signature: signature, timestamp: timestamp)
    }

    func testDeviceClaimAcceptedByIndependentVerifier() throws {
        let password = DeviceSRP.newDevicePassword()
        XCTAssertTrue(try deviceSignIn(registeredWith: password, password: password))
    }

    func testWrongDevicePasswordRefused() throws {
        let password = DeviceSRP.newDevicePassword()
        XCTAssertFalse(try deviceSignIn(registeredWith: password, password: DeviceSRP.newDevicePassword()))
    }

    func testClaimForAnotherDeviceKeyRefused() throws {
        let password = DeviceSRP.newDevicePassword()
        XCTAssertFalse(try deviceSignIn(registeredWith: password, password: password, deviceKey: deviceKey + "0"))
    }
}

/// The remembered device in the sign-in and refresh wire formats.
final class DeviceAuthenticatorTests: XCTestCase {
    private let device = DeviceCredentials(deviceKey: "eu-west-1_dev-1", deviceGroupKey: "-group", devicePassword: "pw")
    private var noWait: RetryPolicy { RetryPolicy(maxAttempts: 3, sleep: { _ in }, random: { 0.5 }) }

    private func tokens(device metadata: [String: String]? = nil) -> [String: Any] {
        var result: [String: Any] = [
            "AccessToken": TestJWT.make(["username": "alice", "exp": 1_900_000_000]), "RefreshToken": "r",
            "ExpiresIn": 3600,
        ]
        result["NewDeviceMetadata"] = metadata
        return result
    }

    private func authenticator(_ transport: ScriptedTransport, secret: String? = nil) -> Authenticator {
        Authenticator(
            service: CognitoService(
                endpoint: "https://cognito-idp.eu-west-1.amazonaws.com", transport: transport,
                retryPolicy: noWait),
            client: AppClient(userPoolId: "eu-west-1_myPool", clientId: "client1", clientSecret: secret))
    }

    func testDeviceKeySentAndDeviceSRPAuthAnsweredWithSRPA() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json([
                "ChallengeName": "DEVICE_SRP_AUTH", "ChallengeParameters": ["USERNAME": "alice"], "Session": "s1",
            ]),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        let result = try authenticator(transport, secret: "k").signIn(
            username: "alice", password: "pw", flow: .password,
            device: device
        ) { _ in
            XCTFail("no challenge for the caller")
            return [:]
        }
        XCTAssertNil(result.refusedDevice)
        XCTAssertEqual((transport.body(0)["AuthParameters"] as? [String: String])?["DEVICE_KEY"], "eu-west-1_dev-1")
        let answer = try XCTUnwrap(transport.body(1)["ChallengeResponses"] as? [String: String])
        XCTAssertEqual(transport.body(1)["ChallengeName"] as? String, "DEVICE_SRP_AUTH")
        XCTAssertEqual(answer["USERNAME"], "alice")
        XCTAssertEqual(answer["DEVICE_KEY"], "eu-west-1_dev-1")
        XCTAssertNotNil(answer["SECRET_HASH"])
        XCTAssertNotNil(BigUInt(try XCTUnwrap(answer["SRP_A"]), radix: 16))
    }

    func testNewDeviceMetadataIsDecoded() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json([
                "AuthenticationResult": tokens(device: [
                    "DeviceKey": "eu-west-1_new", "DeviceGroupKey": "-g",
                ])
            ])
        ])
        let result = try authenticator(transport).signIn(username: "alice", password: "pw", flow: .password) { _ in [:]
        }
        XCTAssertEqual(
            result.tokens.newDeviceMetadata, NewDeviceMetadata(deviceKey: "eu-west-1_new", deviceGroupKey: "-g"))
        XCTAssertNil(
            (transport.body(0)["AuthParameters"] as? [String: String])?["DEVICE_KEY"], "no device, no DEVICE_KEY")
    }

    func testUnknownDeviceIsDroppedAndTheSignInMadeWithoutIt() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.error("ResourceNotFoundException", "Device does not exist."),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        let result = try authenticator(transport).signIn(
            username: "alice", password: "pw", flow: .password, device: device
        ) { _ in [:] }
        XCTAssertEqual(result.refusedDevice, device)
        XCTAssertNotNil((transport.body(0)["AuthParameters"] as? [String: String])?["DEVICE_KEY"])
        XCTAssertNil((transport.body(1)["AuthParameters"] as? [String: String])?["DEVICE_KEY"])
    }

    func testResourceNotFoundWithoutTheDeviceTooIsNotBlamedOnIt() {
        let transport = ScriptedTransport([
            ScriptedTransport.error("ResourceNotFoundException", "User pool client client1 does not exist."),
            ScriptedTransport.error("ResourceNotFoundException", "User pool client client1 does not exist."),
        ])
        XCTAssertThrowsError(
            try authenticator(transport).signIn(username: "alice", password: "pw", flow: .password, device: device) {
                _ in [:]
            }
        ) {
            XCTAssertEqual(($0 as? CognitoError)?.errorType, "ResourceNotFoundException")
        }
    }

    func testRefusedDevicePasswordVerifierDropsTheDevice() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json(["ChallengeName": "DEVICE_SRP_AUTH", "ChallengeParameters": [:], "Session": "s1"]),
            ScriptedTransport.json([
                "ChallengeName": "DEVICE_PASSWORD_VERIFIER", "Session": "s2",
                "ChallengeParameters": [
                    "SRP_B": "abcdef0123456789", "SALT": "0fa1",
                    "SECRET_BLOCK": Data("block".utf8).base64EncodedString(),
                ],
            ]),
            ScriptedTransport.error("NotAuthorizedException", "Incorrect username or password."),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        let result = try authenticator(transport).signIn(
            username: "alice", password: "pw", flow: .password, device: device
        ) { _ in [:] }
        XCTAssertEqual(result.refusedDevice, device)
        let verifier = try XCTUnwrap(transport.body(2)["ChallengeResponses"] as? [String: String])
        XCTAssertEqual(transport.body(2)["ChallengeName"] as? String, "DEVICE_PASSWORD_VERIFIER")
        XCTAssertEqual(
            Set(verifier.keys),
            ["USERNAME", "DEVICE_KEY", "PASSWORD_CLAIM_SECRET_BLOCK", "PASSWORD_CLAIM_SIGNATURE", "TIMESTAMP"])
        XCTAssertEqual(transport.body(2)["Session"] as? String, "s2")
        XCTAssertEqual(
            transport.operations, ["InitiateAuth", "RespondToAuthChallenge", "RespondToAuthChallenge", "InitiateAuth"])
    }

    func testRefreshSendsTheDeviceKeyAndDropsAnUnknownOne() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
            ScriptedTransport.error("ResourceNotFoundException", "Device does not exist."),
            ScriptedTransport.json(["AuthenticationResult": tokens()]),
        ])
        let auth = authenticator(transport)
        XCTAssertFalse(try auth.refresh(refreshToken: "r", username: "alice", device: "eu-west-1_dev-1").deviceRefused)
        XCTAssertEqual(transport.body(0)["DeviceKey"] as? String, "eu-west-1_dev-1")
        XCTAssertTrue(try auth.refresh(refreshToken: "r", username: "alice", device: "eu-west-1_dev-1").deviceRefused)
        XCTAssertNil(transport.body(2)["DeviceKey"])
    }

    func testRefreshTokenAuthSendsDEVICE_KEY() throws {
        let transport = ScriptedTransport([ScriptedTransport.json(["AuthenticationResult": tokens()])])
        _ = try authenticator(transport).refreshTokenAuth(
            refreshToken: "r", username: "alice", deviceKey: "eu-west-1_dev-1")
        XCTAssertEqual((transport.body(0)["AuthParameters"] as? [String: String])?["DEVICE_KEY"], "eu-west-1_dev-1")
    }
}

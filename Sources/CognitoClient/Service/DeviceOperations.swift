#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Device tracking (remembered devices). Shapes from Cognito's service model (botocore
// cognito-idp 2016-04-18): ConfirmDevice, UpdateDeviceStatus, ListDevices, ForgetDevice and the
// IAM-signed AdminListDevices, AdminForgetDevice.

/// `AuthenticationResult.NewDeviceMetadata`: the service met a device it does not know.
public struct NewDeviceMetadata: Codable, Sendable, Equatable {
    public var deviceKey: String?
    public var deviceGroupKey: String?

    public init(deviceKey: String?, deviceGroupKey: String?) {
        self.deviceKey = deviceKey
        self.deviceGroupKey = deviceGroupKey
    }
}

/// `DeviceSecretVerifierConfigType`: base64 of the padded big-endian salt and verifier.
public struct DeviceSecretVerifierConfig: Codable, Sendable, Equatable {
    public var passwordVerifier: String
    public var salt: String
}

struct ConfirmDeviceRequest: Encodable {
    var accessToken: String
    var deviceKey: String
    var deviceSecretVerifierConfig: DeviceSecretVerifierConfig
    var deviceName: String
}

public struct ConfirmDeviceResponse: Decodable, Sendable {
    /// True when the pool leaves remembering the device to the user (UpdateDeviceStatus).
    public var userConfirmationNecessary: Bool?
}

struct UpdateDeviceStatusRequest: Encodable {
    var accessToken: String
    var deviceKey: String
    var deviceRememberedStatus: String
}

struct ListDevicesRequest: Encodable {
    var accessToken: String
    var limit: Int?
    var paginationToken: String?
}

struct AdminListDevicesRequest: Encodable {
    var userPoolId: String
    var username: String
    var limit: Int?
    var paginationToken: String?
}

struct ListDevicesResponse: Decodable {
    var devices: [DeviceType]?
    var paginationToken: String?
}

struct ForgetDeviceRequest: Encodable {
    var accessToken: String
    var deviceKey: String
}

struct AdminForgetDeviceRequest: Encodable {
    var userPoolId: String
    var username: String
    var deviceKey: String
}

/// `DeviceType`: one device of a user. Attribute values are the service's (or the device's)
/// text: callers print them escaped.
public struct DeviceType: Decodable, Sendable, Equatable {
    public var deviceKey: String?
    public var deviceAttributes: [AttributeType]?
    /// Seconds since the epoch (the protocol's timestamps).
    public var deviceCreateDate: Double?
    public var deviceLastModifiedDate: Double?
    public var deviceLastAuthenticatedDate: Double?

    public init(
        deviceKey: String?, deviceAttributes: [AttributeType]? = nil, deviceCreateDate: Double? = nil,
        deviceLastModifiedDate: Double? = nil, deviceLastAuthenticatedDate: Double? = nil
    ) {
        self.deviceKey = deviceKey
        self.deviceAttributes = deviceAttributes
        self.deviceCreateDate = deviceCreateDate
        self.deviceLastModifiedDate = deviceLastModifiedDate
        self.deviceLastAuthenticatedDate = deviceLastAuthenticatedDate
    }

    public func attribute(_ name: String) -> String? {
        deviceAttributes?.first { $0.name == name }?.value
    }

    /// `device_name`, as given to ConfirmDevice.
    public var name: String? { attribute("device_name") }

    /// `dev:device_remembered_status`: true for `remembered`, false for `not_remembered`, nil when absent.
    public var remembered: Bool? {
        attribute("dev:device_remembered_status").map { $0 == "remembered" }
    }

    /// When the device was last used to sign in, else last changed.
    public var lastSeen: Date? {
        (deviceLastAuthenticatedDate ?? deviceLastModifiedDate).map { Date(timeIntervalSince1970: $0) }
    }
}

extension CognitoService {
    /// ConfirmDevice: registers the device's SRP verifier. Not repeated after an unknown outcome
    /// (a second confirmation of the same key is refused as DeviceKeyExistsException).
    public func confirmDevice(
        accessToken: String, deviceKey: String, verifier: DeviceSecretVerifierConfig,
        deviceName: String
    ) throws -> ConfirmDeviceResponse {
        try call(
            "ConfirmDevice",
            ConfirmDeviceRequest(
                accessToken: accessToken, deviceKey: deviceKey,
                deviceSecretVerifierConfig: verifier, deviceName: deviceName),
            idempotent: false)
    }

    /// UpdateDeviceStatus `remembered` or `not_remembered`. Setting a status twice is harmless.
    public func updateDeviceStatus(accessToken: String, deviceKey: String, remembered: Bool) throws {
        _ = try call(
            "UpdateDeviceStatus",
            UpdateDeviceStatusRequest(
                accessToken: accessToken, deviceKey: deviceKey,
                deviceRememberedStatus: remembered ? "remembered" : "not_remembered"),
            idempotent: true, as: EmptyResponse.self)
    }

    /// ListDevices, every page. Read-only, so retried.
    public func listDevices(accessToken: String) throws -> [DeviceType] {
        try allPages { token in
            try call(
                "ListDevices", ListDevicesRequest(accessToken: accessToken, limit: 60, paginationToken: token),
                idempotent: true)
        }
    }

    /// ForgetDevice. Repeating it is harmless (a second one answers ResourceNotFoundException).
    public func forgetDevice(accessToken: String, deviceKey: String) throws {
        _ = try call(
            "ForgetDevice", ForgetDeviceRequest(accessToken: accessToken, deviceKey: deviceKey),
            idempotent: true, as: EmptyResponse.self)
    }

    /// AdminListDevices (IAM-signed), every page.
    public func adminListDevices(userPoolId: String, username: String) throws -> [DeviceType] {
        try allPages { token in
            try call(
                "AdminListDevices",
                AdminListDevicesRequest(
                    userPoolId: userPoolId, username: username, limit: 60,
                    paginationToken: token), idempotent: true)
        }
    }

    /// AdminForgetDevice (IAM-signed).
    public func adminForgetDevice(userPoolId: String, username: String, deviceKey: String) throws {
        _ = try call(
            "AdminForgetDevice",
            AdminForgetDeviceRequest(userPoolId: userPoolId, username: username, deviceKey: deviceKey),
            idempotent: true, as: EmptyResponse.self)
    }

    /// Follows PaginationToken (see `everyPage`).
    private func allPages(_ page: (String?) throws -> ListDevicesResponse) throws -> [DeviceType] {
        try everyPage { token in
            let answer = try page(token)
            return (answer.devices ?? [], answer.paginationToken)
        }
    }
}

import ArgumentParser
import CognitoClient
import Foundation

/// `authctl devices`: the devices Cognito tracks for a user.
struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List or forget the devices Cognito remembers for the signed-in user (or, with --user, any user).",
        subcommands: [DevicesList.self, DevicesForget.self])
}

/// One device in `devices list --output json`. Name and key are the service's text, as sent.
struct DeviceSummary: Encodable {
    var deviceKey: String
    var name: String?
    var lastSeen: Date?
    var createdAt: Date?
    var remembered: Bool?
    /// The device this machine keeps (never set with --user).
    var thisDevice: Bool

    enum CodingKeys: String, CodingKey { case deviceKey, name, lastSeen, createdAt, remembered, thisDevice }

    // Absent values are written as null: scripts see every key in every answer.
    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(deviceKey, forKey: .deviceKey)
        try container.encode(name, forKey: .name)
        try container.encode(lastSeen, forKey: .lastSeen)
        try container.encode(createdAt, forKey: .createdAt)
        try container.encode(remembered, forKey: .remembered)
        try container.encode(thisDevice, forKey: .thisDevice)
    }
}

extension DeviceSummary {
    init(_ device: DeviceType, thisDeviceKey: String?) {
        self.init(deviceKey: device.deviceKey ?? "", name: device.name, lastSeen: device.lastSeen,
                  createdAt: device.deviceCreateDate.map { Date(timeIntervalSince1970: $0) },
                  remembered: device.remembered, thisDevice: thisDeviceKey != nil && device.deviceKey == thisDeviceKey)
    }

    /// One line for people: marker, key, name, last seen, remembered; outside text escaped.
    var textLine: String {
        let marker = thisDevice ? "*" : " "
        let seen = lastSeen.map(Format.localTime) ?? "never"
        let state = remembered.map { $0 ? "remembered" : "not remembered" } ?? "unknown"
        return "\(marker) \(OutsideText(deviceKey))  \(OutsideText(name ?? "(no name)"))  last seen \(seen)  \(state)"
    }
}

/// `devices list --output json`.
struct DeviceListReport: Encodable {
    var user: String
    var userPoolId: String
    var devices: [DeviceSummary]
}

/// `devices forget --output json`.
struct DeviceForgetReport: Encodable {
    var user: String
    var userPoolId: String
    var deviceKey: String
    /// `forgotten`, or `unknown` (the service did not know it; nothing was left to forget there).
    var service: String
    /// The machine's own keys for it were deleted.
    var removedLocally: Bool
}

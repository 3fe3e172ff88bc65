import ArgumentParser
import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    @Nullable var name: String?
    @Nullable var lastSeen: Date?
    @Nullable var createdAt: Date?
    @Nullable var remembered: Bool?
    /// The device this machine keeps (never set with --user).
    var thisDevice: Bool
}

extension DeviceSummary {
    init(_ device: DeviceType, thisDeviceKey: String?) {
        self.init(
            deviceKey: device.deviceKey ?? "", name: device.name, lastSeen: device.lastSeen,
            createdAt: device.deviceCreateDate.map { Date(timeIntervalSince1970: $0) },
            remembered: device.remembered, thisDevice: thisDeviceKey != nil && device.deviceKey == thisDeviceKey)
    }

    /// One line for people: marker, key, name, last seen, remembered; outside text escaped.
    var textLine: String {
        let marker = thisDevice ? "*" : " "
        let seen = lastSeen.map(Format.localTime) ?? "never"
        let state = remembered.map { $0 ? "remembered" : "not remembered" } ?? "unknown"
        return
            "\(marker) \(UntrustedText(deviceKey))  \(UntrustedText(name ?? "(no name)"))  last seen \(seen)  \(state)"
    }
}

/// `devices list --output json`.
struct DeviceListReport: CommandReport {
    var user: String
    var userPoolId: String
    var devices: [DeviceSummary]

    var textOutput: [String] {
        devices.isEmpty ? [] : [devices.map(\.textLine).joined(separator: "\n")]
    }

    var textMessages: [String] {
        if devices.isEmpty { return ["Cognito tracks no devices for \(UntrustedText(user)) in \(userPoolId)."] }
        return devices.contains(where: \.thisDevice) ? ["(* this device)"] : []
    }
}

/// `devices forget --output json`.
struct DeviceForgetReport: CommandReport {
    var user: String
    var userPoolId: String
    var deviceKey: String
    /// `forgotten`, or `unknown` (the service did not know it; nothing was left to forget there).
    var service: String
    /// The machine's own keys for it were deleted.
    var removedLocally: Bool

    var textMessages: [String] {
        let key = UntrustedText(deviceKey)
        let here = removedLocally ? "; its keys were deleted from this machine" : ""
        return [
            service == "forgotten"
                ? "Forgot device \(key) of \(UntrustedText(user))\(here)."
                : "Cognito no longer knew device \(key) of \(UntrustedText(user))\(here)."
        ]
    }
}

import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What `ops investigate` reads about one user, and `ops contain` writes into the incident record
/// before it changes anything. Every string came from the service (or the attacker, for device
/// names and cities): bounded here, escaped where printed.
package struct UserInvestigation: Codable, Equatable {
    package var user: String
    package var status: String?
    package var enabled: Bool?
    package var created: Date?
    package var modified: Date?
    package var mfaEnabled: [String] = []
    package var preferredMfa: String?
    package var verifiedEmail = false
    package var verifiedPhone = false
    /// AdminGetUserAuthFactors' configured factors; nil with `factorsNote` when it was refused.
    package var factors: [Factor]?
    package var factorsNote: String?
    package var groups: [String] = []
    package var devices: [Device] = []
    package var devicesNote: String?
    /// Sessions the pool tracks (AdminListUserSessions); nil with `sessionsNote` when it cannot say.
    package var sessions: [TrackedSession]?
    package var sessionsNote: String?
    /// Sign-in events, newest first, within the bounds; nil with `eventsNote` when there are none to read.
    package var events: [Event]?
    package var eventsNote: String?
    package var eventsTruncated = false

    package struct Factor: Codable, Equatable {
        package var name: String
        /// A factor that is only a second factor (SOFTWARE_TOKEN): it signs no one in alone.
        package var mfaOnly: Bool
    }

    package struct Device: Codable, Equatable {
        package var key: String
        package var name: String?
        package var remembered: Bool?
        package var lastSeen: Date?
        package var lastIp: String?
    }

    package struct Event: Codable, Equatable {
        package var id: String?
        package var time: Date?
        package var type: String?
        package var response: String?
        package var riskLevel: String?
        package var riskDecision: String?
        package var compromisedCredentials: Bool?
        package var ip: String?
        package var city: String?
        package var country: String?
        package var device: String?
        package var feedback: String?
    }

    /// Passkeys cannot be removed by any administrator operation: the user must stay disabled.
    package var hasPasskeys: Bool { factors?.contains { $0.name == "WEB_AUTHN" } ?? false }
}

/// A session the pool tracks (its managed-login or token session), as investigate lists it.
package struct TrackedSession: Codable, Equatable {
    package var id: String
    package var kind: String?
    package var clientId: String?
    package var device: String?
    package var lastIp: String?
    package var location: String?
    package var lastActive: Date?

    package init(
        id: String, kind: String? = nil, clientId: String? = nil, device: String? = nil, lastIp: String? = nil,
        location: String? = nil, lastActive: Date? = nil
    ) {
        self.id = id
        self.kind = kind
        self.clientId = clientId
        self.device = device
        self.lastIp = lastIp
        self.location = location
        self.lastActive = lastActive
    }
}

/// How far back `investigate` reads sign-in events.
package struct EventBounds: Equatable {
    package var since: Date?
    package var maximum: Int

    package init(since: Date? = nil, maximum: Int = 200) {
        self.since = since
        self.maximum = maximum
    }
}

/// Reads one user's account, factors, groups, devices, sessions and events. `read` paces each
/// call (the bulk engine's user-read bucket); an event log or factors the pool does not keep are
/// said, not failed.
package struct Investigator {
    package let poolId: String
    package let bounds: EventBounds
    /// Outside strings are cut to this length before they are kept or printed.
    package static let fieldLimit = 256

    package init(poolId: String, bounds: EventBounds) {
        self.poolId = poolId
        self.bounds = bounds
    }

    package func investigate(
        _ username: String, service: CognitoService, read: (() throws -> Void) throws -> Void = { try $0() }
    ) throws -> UserInvestigation {
        var found = UserInvestigation(user: username)
        var user: AdminUser?
        try read { user = try service.adminGetUser(userPoolId: poolId, username: username) }
        if let user {
            found.status = user.userStatus.map(Self.bounded)
            found.enabled = user.enabled
            found.created = user.userCreateDate.map { Date(timeIntervalSince1970: $0) }
            found.modified = user.userLastModifiedDate.map { Date(timeIntervalSince1970: $0) }
            found.mfaEnabled = (user.userMFASettingList ?? []).prefix(8).map(Self.bounded)
            found.preferredMfa = user.preferredMfaSetting.map(Self.bounded)
            found.verifiedEmail = user.attribute("email_verified") == "true"
            found.verifiedPhone = user.attribute("phone_number_verified") == "true"
        }
        do {
            var factors: UserAuthFactors?
            try read { factors = try service.adminGetUserAuthFactors(userPoolId: poolId, username: username) }
            found.factors = (factors?.configuredUserAuthFactors ?? []).prefix(8).map {
                .init(name: Self.bounded($0), mfaOnly: $0 == "SOFTWARE_TOKEN")
            }
        } catch let error as CognitoError where Self.notKept(error) {
            found.factorsNote = "AdminGetUserAuthFactors: \(Self.bounded(error.errorType ?? "refused"))"
        }
        try read {
            found.groups = try service.adminListGroupsForUser(userPoolId: poolId, username: username).map(Self.bounded)
        }
        do {
            var devices: [DeviceType] = []
            try read { devices = try service.adminListDevices(userPoolId: poolId, username: username) }
            found.devices = devices.prefix(1000).compactMap { device in
                device.deviceKey.map {
                    .init(
                        key: Self.bounded($0), name: device.name.map(Self.bounded), remembered: device.remembered,
                        lastSeen: device.lastSeen, lastIp: device.attribute("last_ip_used").map(Self.bounded))
                }
            }
        } catch let error as CognitoError where Self.notKept(error) {
            found.devicesNote = "the pool does not track devices (\(Self.bounded(error.errorType ?? "refused")))"
        }
        try readSessions(username, service: service, read: read, into: &found)
        try readEvents(username, service: service, read: read, into: &found)
        return found
    }

    private func readSessions(
        _ username: String, service: CognitoService, read: (() throws -> Void) throws -> Void,
        into found: inout UserInvestigation
    ) throws {
        do {
            var listed: [UserSession] = []
            try read { listed = try service.adminListUserSessions(userPoolId: poolId, username: username) }
            found.sessions = listed.prefix(1000).compactMap(Self.session)
        } catch let error as CognitoError where Self.notKept(error) {
            found.sessionsNote =
                "the pool does not track sessions (\(Self.bounded(error.errorType ?? "refused"))): a managed-login session lives about an hour"
        }
    }

    static func session(_ session: UserSession) -> TrackedSession? {
        guard let id = session.validId else { return nil }
        let place = [session.lastLocation?.city, session.lastLocation?.country].compactMap { $0 }
        return TrackedSession(
            id: id, kind: session.sessionType.map(bounded), clientId: session.clientId.map(bounded),
            device: session.deviceType.map(bounded), lastIp: session.lastIPAddress.map(bounded),
            location: place.isEmpty ? nil : bounded(place.joined(separator: ", ")), lastActive: session.lastActive)
    }

    private func readEvents(
        _ username: String, service: CognitoService, read: (() throws -> Void) throws -> Void,
        into found: inout UserInvestigation
    ) throws {
        let since = bounds.since
        do {
            var listed: (events: [AuthEvent], truncated: Bool) = ([], false)
            try read {
                listed = try service.adminListUserAuthEvents(
                    userPoolId: poolId, username: username, maximum: bounds.maximum
                ) { event in
                    guard let since, let created = event.creationDate else { return true }
                    return Date(timeIntervalSince1970: created) >= since
                }
            }
            found.events = listed.events.map(Self.event)
            found.eventsTruncated = listed.truncated
            if listed.events.isEmpty { found.eventsNote = "no sign-in events recorded (threat protection off?)" }
        } catch let error as CognitoError where Self.notKept(error) {
            found.eventsNote =
                "no sign-in events: the pool has no threat protection (\(Self.bounded(error.errorType ?? "refused")))"
        }
    }

    static func event(_ event: AuthEvent) -> UserInvestigation.Event {
        let context = event.eventContextData
        return .init(
            id: event.eventId.map(bounded), time: event.creationDate.map { Date(timeIntervalSince1970: $0) },
            type: event.eventType.map(bounded), response: event.eventResponse.map(bounded),
            riskLevel: event.eventRisk?.riskLevel.map(bounded),
            riskDecision: event.eventRisk?.riskDecision.map(bounded),
            compromisedCredentials: event.eventRisk?.compromisedCredentialsDetected,
            ip: context?.ipAddress.map(bounded), city: context?.city.map(bounded),
            country: context?.country.map(bounded), device: context?.deviceName.map(bounded),
            feedback: event.eventFeedback?.feedbackValue.map(bounded))
    }

    /// A refusal that means the pool keeps no such thing (no threat protection, no device or
    /// session tracking, an operation this service lacks), not a failure of the investigation.
    package static func notKept(_ error: CognitoError) -> Bool {
        guard error.kind == .service, !error.isThrottling, !error.isServerError else { return false }
        switch error.refusal {
        case .threatProtectionOff?, .sessionTrackingDisabled?, .poolConfiguration?, .operationNotEnabled?,
            .operationUnsupported?,
            .invalidParameter?:
            return true
        default: return false
        }
    }

    package static func bounded(_ text: String) -> String {
        text.count <= fieldLimit ? text : String(text.prefix(fieldLimit)) + "…"
    }
}

import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the signed-in user is signed in (`sessions`, `sessions revoke`, `signout --others`): the
/// pool's session tracking, read and ended with the stored session's access token.
package struct UserSessions {
    package let context: CommandContext
    package let sessions: ProfileSession

    package init(context: CommandContext, sessions: ProfileSession) {
        self.context = context
        self.sessions = sessions
    }

    /// What the service says about the user's sessions.
    package enum Listing {
        /// The sessions, this one marked (`isCurrentSession`), newest activity first.
        case tracked([UserSession])
        /// The pool does not track sessions.
        case trackingOff(pool: String)
    }

    /// The user's sessions, with the session that listed them.
    package func list() throws -> (StoredSession, Listing) {
        try sessions.withFreshSession { session, service in
            do {
                let found = try service.listUserSessions(accessToken: session.accessToken)
                return (session, .tracked(Self.newestFirst(found)))
            } catch let error as CognitoError where error.refusal == .sessionTrackingDisabled {
                return (session, .trackingOff(pool: session.userPoolId))
            }
        }
    }

    static func newestFirst(_ found: [UserSession]) -> [UserSession] {
        found.sorted { ($0.lastActiveDate ?? $0.createDate ?? 0) > ($1.lastActiveDate ?? $1.createDate ?? 0) }
    }

    /// Ends each of `ids` (never this device's own: the caller checks it against a listing first),
    /// one RevokeUserSession each, and says what became of every one.
    package func revoke(_ ids: [String], linked: Bool) throws -> [SessionRevokeOutcome] {
        try ids.map { id in
            try sessions.withFreshSession { session, service in
                do {
                    try service.revokeUserSession(
                        accessToken: session.accessToken, sessionId: id, linked: linked ? .linked : .none)
                    return SessionRevokeOutcome(sessionId: id, result: .ended)
                } catch let error as CognitoError where error.refusal == .resourceNotFound {
                    return SessionRevokeOutcome(sessionId: id, result: .alreadyGone)
                } catch let error as CognitoError where !error.endsSession && error.kind == .service {
                    return SessionRevokeOutcome(
                        sessionId: id, result: .refused, reason: String(error.message.prefix(300)),
                        errorType: error.errorType)
                }
            }
        }
    }

    /// The message for a pool without session tracking (one line; exit 0 for a listing).
    package static func trackingOffMessage(pool: String) -> String {
        "Cognito does not track sessions in user pool \(pool) (session tracking is off): nothing to list. An administrator turns it on (Essentials tier or higher): aws cognito-idp set-user-pool-session-configuration --user-pool-id \(pool) --user-session-tracking ENABLED --token-session MaxPerUser=10"
    }
}

/// One session as `sessions --output json` gives it. Every string is the service's text, as sent
/// (printed escaped in text mode).
package struct SessionSummary: Encodable {
    package var sessionId: String
    package var type: String
    @Nullable package var clientId: String?
    /// The profile's own app client.
    package var thisClient: Bool
    @Nullable package var device: String?
    @Nullable package var lastIpAddress: String?
    @Nullable package var city: String?
    @Nullable package var country: String?
    @Nullable package var createdAt: Date?
    @Nullable package var lastActiveAt: Date?
    @Nullable package var originSessionId: String?
    package var current: Bool

    package init(_ session: UserSession, profileClientId: String) {
        sessionId = session.sessionId ?? ""
        type = session.kind.map { $0 == .sso ? "sso" : "token" } ?? "unknown"
        clientId = session.clientId
        thisClient = session.clientId == profileClientId
        device = session.deviceType
        lastIpAddress = session.lastIPAddress
        city = session.lastLocation?.city
        country = session.lastLocation?.country
        createdAt = session.created
        lastActiveAt = session.lastActive
        originSessionId = session.originSessionId
        current = session.isCurrentSession ?? false
    }

    /// One line for people: marker, id, type, client, device, IP, place, created, last active.
    package var textLine: String {
        let marker = current ? "*" : " "
        let client = thisClient ? "this profile's client" : "client \(UntrustedText(clientId ?? "?"))"
        let place = [city, country].compactMap { $0 }.filter { !$0.isEmpty }.map { UntrustedText($0).description }
        let created = createdAt.map(Format.localTime) ?? "?"
        let active = lastActiveAt.map(Format.localTime) ?? "?"
        return
            "\(marker) \(UntrustedText(sessionId))  \(type)  \(client)  \(UntrustedText(device ?? "unknown device"))  \(UntrustedText(lastIpAddress ?? "?"))  \(place.isEmpty ? "unknown place" : place.joined(separator: ", "))  created \(created)  last active \(active)"
    }
}

/// `sessions [list] --output json`.
package struct SessionListReport: CommandReport {
    package var user: String
    package var userPoolId: String
    package var tracking: Bool
    package var sessions: [SessionSummary]

    package init(user: String, userPoolId: String, tracking: Bool, sessions: [SessionSummary]) {
        self.user = user
        self.userPoolId = userPoolId
        self.tracking = tracking
        self.sessions = sessions
    }

    package var textOutput: [String] {
        sessions.isEmpty ? [] : [sessions.map(\.textLine).joined(separator: "\n")]
    }

    package var textMessages: [String] {
        if !tracking { return [UserSessions.trackingOffMessage(pool: userPoolId)] }
        if sessions.isEmpty { return ["Cognito lists no active session of \(UntrustedText(user)) in \(userPoolId)."] }
        return sessions.contains(where: \.current) ? ["(* this session)"] : []
    }

    package var jsonMessages: [String] {
        tracking ? [] : [UserSessions.trackingOffMessage(pool: userPoolId)]
    }
}

/// What became of one session asked to end.
package struct SessionRevokeOutcome: Encodable {
    package enum Result: String, Encodable {
        case ended
        /// The service no longer knew it (ended elsewhere, expired, or never this user's).
        case alreadyGone = "already-gone"
        case refused
    }
    package var sessionId: String
    package var result: Result
    /// The service's reason for a refusal (outside text).
    @Nullable package var reason: String? = nil
    @Nullable package var errorType: String? = nil

    package var textLine: String {
        let id = UntrustedText(sessionId)
        switch result {
        case .ended: return "Ended session \(id)."
        case .alreadyGone: return "Session \(id) was already gone (Cognito no longer knows it)."
        case .refused:
            return "Session \(id) was not ended: Cognito refused (\(UntrustedText(reason ?? "no reason given")))."
        }
    }
}

/// `sessions revoke` and `signout --others` (`--output json`).
package struct SessionRevokeReport: CommandReport {
    package var user: String
    package var userPoolId: String
    package var results: [SessionRevokeOutcome]
    /// Tokens already issued to the ended sessions pass offline JWT checks until then.
    @Nullable package var exposureUntil: Date?
    package var textMessages: [String] = []

    package enum CodingKeys: String, CodingKey {
        case user, userPoolId, results, exposureUntil
    }

    package init(user: String, userPoolId: String, results: [SessionRevokeOutcome], lifetime: Double, now: Date) {
        self.user = user
        self.userPoolId = userPoolId
        self.results = results
        let ended = results.contains { $0.result == .ended }
        exposureUntil = ended ? now.addingTimeInterval(lifetime) : nil
        textMessages = results.map(\.textLine)
        if results.isEmpty { textMessages.append("No other session of \(UntrustedText(user)): nothing to end.") }
        if let exposureUntil {
            textMessages.append(
                "Their refresh tokens no longer work; access and id tokens already issued to them keep passing offline JWT checks (API Gateway, other services) for up to \(Format.duration(lifetime)): until \(Format.localTime(exposureUntil)) at the latest."
            )
        }
    }

    /// The failure to exit with when some session was refused (after the report is written).
    package var failure: AuthctlError? {
        let refused = results.filter { $0.result == .refused }
        guard !refused.isEmpty else { return nil }
        return AuthctlError(
            .someFailed, "\(refused.count) of \(results.count) sessions could not be ended (see above)")
    }
}

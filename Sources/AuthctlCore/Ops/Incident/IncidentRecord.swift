import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What stays exposed for one user after `ops contain`, computed from what the service says
/// afterwards (so a resumed run states it as well as a whole one).
package struct UserExposure: Codable, Equatable {
    package var user: String
    /// Access and id tokens issued before the sign-out pass offline JWT checks until then.
    package var tokensValidUntil: Date
    package var tokenLifetimeSeconds: Int
    /// Why the lifetime is the documented default (nil: read from the pool's app clients).
    package var tokenLifetimeAssumed: String?
    /// The managed-login (SSO) session: revoked, or how long it lives where it is not tracked.
    package var managedLoginSession: String
    package var passkeysRegistered: Bool
    package var devicesRemaining: Int?
    package var authenticatorRemaining: Bool
    package var userStatus: String?
    package var enabled: Bool?
    /// Reset, temporary, or unchanged (from the user's status afterwards).
    package var password: String?
    /// The same, for people.
    package var summary: [String]
}

/// The tokens' lifetime (the longest of the pool's app clients' access and id tokens, read once
/// a run), and each user's exposure from AdminGetUser, AdminListDevices and the factors afterwards.
package final class ExposureCalculator {
    private let lock = Lock()
    private var lifetime: (seconds: Double, assumedBecause: String?)?
    package static let managedLoginSessionLifetime: Double = 3600

    package init() {}

    package func tokenLifetime(_ service: CognitoService, poolId: String) -> (seconds: Double, assumedBecause: String?)
    {
        if let known = lock.withLock({ lifetime }) { return known }
        var found: (Double, String?)
        do {
            let ids = try service.listUserPoolClientIds(userPoolId: poolId, maximum: 200)
            var longest: Double = 0
            for id in ids {
                if let client = try service.describeUserPoolClient(userPoolId: poolId, clientId: id).userPoolClient {
                    longest = max(longest, client.accessTokenLifetime, client.idTokenLifetime)
                }
            }
            found =
                longest > 0
                ? (longest, nil) : (AdminSignOut.defaultTokenLifetime, "the pool lists no app client to read it from")
        } catch {
            found = (
                AdminSignOut.defaultTokenLifetime,
                "ListUserPoolClients/DescribeUserPoolClient failed: \(UntrustedText(AuthctlError.from(error).message))"
            )
        }
        lock.withLock { lifetime = found }
        return found
    }

    func exposure(
        of username: String, calls: StepCalls, signedOutAt: Date, request: ContainmentRequest,
        passwordStep: StepOutcome? = nil
    ) throws -> UserExposure {
        let (service, poolId) = (calls.service, calls.poolId)
        let lifetime = tokenLifetime(service, poolId: poolId)
        var user: AdminUser?
        try calls.read { user = try service.adminGetUser(userPoolId: poolId, username: username) }
        var factors: [String]?
        do {
            try calls.read {
                factors =
                    try service.adminGetUserAuthFactors(userPoolId: poolId, username: username)
                    .configuredUserAuthFactors
                    ?? []
            }
        } catch let error as CognitoError where Investigator.notKept(error) {}
        var devices: Int?
        do {
            try calls.read { devices = try service.adminListDevices(userPoolId: poolId, username: username).count }
        } catch let error as CognitoError where Investigator.notKept(error) {}
        let until = signedOutAt.addingTimeInterval(lifetime.seconds)
        var ssoLeft: Int?
        do {
            try calls.read {
                ssoLeft = try service.adminListUserSessions(userPoolId: poolId, username: username)
                    .filter { $0.kind == .sso }.count
            }
        } catch let error as CognitoError where Investigator.notKept(error) {}
        let hourLater = Format.localTime(signedOutAt.addingTimeInterval(Self.managedLoginSessionLifetime))
        let sessionWords: String
        switch ssoLeft {
        case 0?: sessionWords = "none left (revoked, or none was open)"
        case let left?: sessionWords = "\(left) still open: they let their holder into the pool's other apps"
        case nil:
            sessionWords =
                "not tracked by the pool, so not revocable: a managed-login session lives about an hour, until about \(hourLater)"
        }
        let passkeys = factors?.contains("WEB_AUTHN") ?? false
        let authenticator =
            (factors?.contains("SOFTWARE_TOKEN") ?? false)
            || (user?.userMFASettingList ?? []).contains("SOFTWARE_TOKEN_MFA")
        var summary = [
            "Tokens issued before the sign-out pass offline JWT checks until \(Format.localTime(until)) (\(Format.duration(lifetime.seconds)) token lifetime\(lifetime.assumedBecause.map { ", assumed: \($0)" } ?? "")).",
            "Managed-login (SSO) session: \(sessionWords).",
        ]
        if passkeys {
            summary.append(
                "Passkeys are registered and no administrator operation removes them: keep the user disabled until the user removes them (DeleteWebAuthnCredential)."
            )
        }
        if let devices {
            summary.append(devices == 0 ? "No remembered device is left." : "\(devices) devices are still remembered.")
        }
        summary.append(authenticator ? "An authenticator app is still enrolled." : "No authenticator app is enrolled.")
        let password = Self.passwordState(user?.userStatus, step: passwordStep)
        summary.append("Password: \(password).")
        summary.append(
            "Account: \(UntrustedText(user?.userStatus ?? "unknown")), \(user?.enabled == false ? "disabled" : "ENABLED")."
        )
        return UserExposure(
            user: username, tokensValidUntil: until, tokenLifetimeSeconds: Format.wholeSeconds(lifetime.seconds),
            tokenLifetimeAssumed: lifetime.assumedBecause, managedLoginSession: sessionWords,
            passkeysRegistered: passkeys, devicesRemaining: devices, authenticatorRemaining: authenticator,
            userStatus: user?.userStatus.map(Investigator.bounded), enabled: user?.enabled, password: password,
            summary: summary)
    }

    /// The password's state: unchanged when this run's password step could not change it (a
    /// temporary password the user already had, possibly the leaked one, included); otherwise from
    /// the user's status afterwards: reset and temporary passwords must be changed before the next
    /// sign-in, any other status means the old one still works.
    static func passwordState(_ status: String?, step: StepOutcome? = nil) -> String {
        if let step, step.result != "done" && step.result != "nothingToDo" {
            return
                "UNCHANGED: whoever knows it signs in again once the account is enabled (run again with --temporary-password-stdin)"
        }
        switch status {
        case "RESET_REQUIRED"?: return "reset: the user sets a new one with the code sent to a verified email or phone"
        case "FORCE_CHANGE_PASSWORD"?: return "temporary: it must be changed at the next sign-in"
        default:
            return
                "UNCHANGED: whoever knows it signs in again once the account is enabled (run again with --temporary-password-stdin)"
        }
    }
}

/// The incident record: JSON Lines, mode 0600, checked like the audit log (OpsAuditLog writes it).
/// A `run` line when a run starts, each user's `snapshot` before anything of theirs changes, every
/// `step`, and the `exposure`. Never a secret: no password, no token, no client secret.
package final class IncidentRecord {
    package let id: String
    private let file: OpsAuditLog
    private let lock = Lock()
    package var path: String { file.path }

    package struct Line<Body: Encodable>: Encodable {
        var kind: String
        var incident: String
        var time: Date
        var user: String?
        var body: Body
    }

    package struct RunStart: Encodable {
        var pool: String
        var selection: String
        var steps: [String]
        var `operator`: OpsAuditLog.Entry.Operator
    }

    package init(path: String, id: String) throws {
        self.id = id
        file = try OpsAuditLog(path: path, naming: "the incident record")
    }

    private func write(_ line: Line<some Encodable>) throws {
        let text = String(decoding: try LocalJSON.encoder.encode(line), as: UTF8.self) + "\n"
        _ = try lock.withLock { try file.append(text) }
    }

    package func started(
        pool: String, selection: String, steps: [ContainStep], who: OpsAuditLog.Entry.Operator, at: Date
    )
        throws
    {
        try write(
            Line(
                kind: "run", incident: id, time: at, user: nil,
                body: RunStart(pool: pool, selection: selection, steps: steps.map(\.rawValue), operator: who)))
    }

    func snapshot(_ found: UserInvestigation, at: Date) throws {
        try write(Line(kind: "snapshot", incident: id, time: at, user: found.user, body: found))
    }

    func step(_ username: String, _ outcome: StepOutcome, at: Date) throws {
        struct Step: Encodable {
            var step: String
            var result: String
            var detail: String?
            var error: String?
            var requestIds: [String]
        }
        try write(
            Line(
                kind: "step", incident: id, time: at, user: username,
                body: Step(
                    step: outcome.step, result: outcome.result, detail: outcome.detail, error: outcome.error,
                    requestIds: outcome.requestIds)))
    }

    func exposure(_ exposed: UserExposure) throws {
        try write(Line(kind: "exposure", incident: id, time: Date(), user: exposed.user, body: exposed))
    }

    /// A line any other command adds (restore).
    package func note(_ kind: String, user: String, at: Date, _ body: some Encodable) throws {
        try write(Line(kind: kind, incident: id, time: at, user: user, body: body))
    }

    /// Where a run's record goes unless `--record` says: next to its checkpoint.
    package static func defaultPath(_ state: OpsStateDirectory, _ stem: String) -> String {
        state.directory.path + "/" + stem + ".incident.jsonl"
    }

    /// A new incident's id: the pool and the time it started, to the second.
    package static func newId(poolId: String, now: Date) -> String {
        let stamp = Format.iso8601(now).filter { $0.isNumber }
        return "incident-\(Digest.hex(poolId).prefix(6))-\(stamp)"
    }

    /// The incident id of the record at `path` (its first line's), nil when it has none.
    package static func incidentId(at path: String) -> String? {
        guard let file = ReadableFile(path: path), let head = file.read(upTo: 4096) else { return nil }
        let firstLine = Data(head.prefix { $0 != 0x0A })
        struct Head: Decodable { var incident: String }
        return (try? LocalJSON.decoder.decode(Head.self, from: firstLine))?.incident
    }
}

import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The steps of `ops contain`, in the order that works against the service: the evidence first;
/// MFA before the password (AdminSetUserMFAPreference refuses a user whose password was reset);
/// the password before disabling (AdminResetUserPassword refuses a disabled user); the global
/// sign-out after disabling, so no refresh in between gets new tokens.
package enum ContainStep: String, CaseIterable, Codable, Sendable {
    case snapshot, feedback, mfa, devices, sessions, password, disable
    case signOut = "signout"

    /// What the step does, for the plan.
    package var calls: String {
        switch self {
        case .snapshot:
            return
                "AdminGetUser, AdminGetUserAuthFactors, AdminListGroupsForUser, AdminListDevices, sessions, AdminListUserAuthEvents, into the record"
        case .feedback: return "AdminUpdateAuthEventFeedback Invalid for the attacker's events"
        case .mfa: return "AdminDeleteSoftwareToken, AdminSetUserMFAPreference (every factor off)"
        case .devices: return "AdminForgetDevice for every remembered device"
        case .sessions: return "AdminRevokeUserSession for every session the pool tracks"
        case .password: return "AdminResetUserPassword (or AdminSetUserPassword, temporary)"
        case .disable: return "AdminDisableUser"
        case .signOut: return "AdminUserGlobalSignOut (refresh tokens revoked)"
        }
    }
}

/// What `ops contain` was asked to do: the steps, and their inputs.
package struct ContainmentRequest {
    package var skipped: Set<ContainStep>
    /// A temporary password (read from stdin, never argv): AdminSetUserPassword Permanent=false.
    package var temporaryPassword: String?
    package var invalidEvents: [String]
    package var invalidSince: Date?
    package var events: EventBounds

    package init(
        skipped: Set<ContainStep>, temporaryPassword: String? = nil, invalidEvents: [String] = [],
        invalidSince: Date? = nil, events: EventBounds = EventBounds()
    ) {
        self.skipped = skipped
        self.temporaryPassword = temporaryPassword
        self.invalidEvents = invalidEvents
        self.invalidSince = invalidSince
        self.events = events
    }

    /// The steps that run, in order (feedback only when events were named).
    package var steps: [ContainStep] {
        ContainStep.allCases.filter { step in
            !skipped.contains(step) && (step != .feedback || !invalidEvents.isEmpty || invalidSince != nil)
        }
    }
}

/// `ops contain`'s work on each user (a `UserSteps` for the bulk engine): every step paced in its
/// quota category, recorded as it ends; the exposure that is left computed from what the service
/// says afterwards, so a resumed run states it as well as a whole one.
package final class Containment: UserSteps {
    package let request: ContainmentRequest
    package let investigator: Investigator
    package let record: IncidentRecord
    package let exposure: ExposureCalculator
    private let now: () -> Date
    private let lock = Lock()
    /// The first users' exposures, for the summary printed at the end (the record has them all).
    package private(set) var exposures: [UserExposure] = []
    package static let exposuresShown = 20

    package init(
        request: ContainmentRequest, investigator: Investigator, record: IncidentRecord,
        exposure: ExposureCalculator, now: @escaping () -> Date
    ) {
        self.request = request
        self.investigator = investigator
        self.record = record
        self.exposure = exposure
        self.now = now
    }

    package var shownExposures: [UserExposure] { lock.withLock { exposures } }

    package func perform(
        _ username: String, using service: CognitoService, done: Set<String>, operation: BulkOperation,
        finished: (StepOutcome) throws -> Void
    ) throws -> OpsResult {
        let calls = StepCalls(
            service: service, poolId: investigator.poolId, username: username, operation: operation)
        var firstFailure: String?
        var signedOutAt: Date?
        var passwordOutcome: StepOutcome?
        for step in request.steps where !done.contains(step.rawValue) {
            var outcome: StepOutcome
            do {
                outcome = try run(step, calls)
            } catch let error as CognitoError {
                if error.refusal == .userNotFound || Self.stopsTheRun(error, in: step) { throw error }
                outcome = StepOutcome(
                    step: step.rawValue, result: "failed", detail: Investigator.bounded(error.message),
                    error: error.errorType
                        ?? (error.isServerError ? "HTTP\(error.httpStatus ?? 500)" : error.kind.rawValue),
                    requestIds: calls.requestIds)
            }
            if step == .signOut && outcome.result == "done" { signedOutAt = now() }
            if step == .password && outcome.result == "notPossible" { outcome.leavesExposed = true }
            if step == .password { passwordOutcome = outcome }
            if outcome.tryAgain { firstFailure = firstFailure ?? outcome.error ?? "PasswordUnchanged" }
            try finished(outcome)
            try record.step(username, outcome, at: now())
        }
        let exposed = try exposure.exposure(
            of: username, calls: calls, signedOutAt: signedOutAt ?? now(), request: request,
            passwordStep: passwordOutcome)
        try record.exposure(exposed)
        lock.withLock { if exposures.count < Self.exposuresShown { exposures.append(exposed) } }
        if let firstFailure { return .failed(code: firstFailure) }
        return request.steps.contains(.disable) ? .disabled : .signedOut
    }

    /// What stops the run rather than one user's step: the service unreachable, the AWS
    /// credentials refused, no such pool (the snapshot's first call). A NotAuthorizedException here
    /// is the user's state ("User is disabled.", a password that cannot be reset now): that user's.
    static func stopsTheRun(_ error: CognitoError, in step: ContainStep) -> Bool {
        if error.kind == .transport { return true }
        guard error.kind == .service, !error.isServerError else { return false }
        return error.refusal == .awsCredentialsRefused || (error.refusal == .resourceNotFound && step == .snapshot)
    }

    private func run(_ step: ContainStep, _ calls: StepCalls) throws -> StepOutcome {
        calls.requestIds = []
        let (poolId, username, service) = (calls.poolId, calls.username, calls.service)
        func outcome(_ result: String, _ detail: String? = nil) -> StepOutcome {
            StepOutcome(step: step.rawValue, result: result, detail: detail, requestIds: calls.requestIds)
        }
        switch step {
        case .snapshot:
            let found = try investigator.investigate(username, service: service) { try calls.read($0) }
            try record.snapshot(found, at: now())
            return outcome(
                "done",
                "status \(found.status ?? "?"), \(found.devices.count) devices, \(found.events?.count ?? 0) events")
        case .feedback:
            return try markEvents(calls, outcome)
        case .mfa:
            try calls.update { try service.adminDeleteSoftwareToken(userPoolId: poolId, username: username) }
            do {
                try calls.update { try service.adminTurnOffMFA(userPoolId: poolId, username: username) }
            } catch let error as CognitoError where error.refusal == .passwordResetRequired {
                return outcome("notPossible", "authenticator deleted; the MFA preference cannot change after a reset")
            }
            return outcome("done", "authenticator deleted, every MFA factor off")
        case .devices:
            var devices: [DeviceType] = []
            do {
                try calls.read { devices = try service.adminListDevices(userPoolId: poolId, username: username) }
            } catch let error as CognitoError where Investigator.notKept(error) {
                return outcome("nothingToDo", "the pool does not track devices")
            }
            for key in devices.compactMap(\.deviceKey) {
                try calls.update {
                    try service.adminForgetDevice(userPoolId: poolId, username: username, deviceKey: key)
                }
            }
            return outcome(devices.isEmpty ? "nothingToDo" : "done", "\(devices.count) devices forgotten")
        case .sessions:
            var listed: [UserSession] = []
            do {
                try calls.read { listed = try service.adminListUserSessions(userPoolId: poolId, username: username) }
            } catch let error as CognitoError where Investigator.notKept(error) {
                return outcome(
                    "notPossible", "the pool does not track sessions: a managed-login session lives about an hour")
            }
            // The managed-login (SSO) sessions, each with the token sessions it started; the
            // remaining token sessions end with the global sign-out.
            let single = listed.filter { $0.kind == .sso }.compactMap(\.validId)
            for id in single {
                try calls.update {
                    try service.adminRevokeUserSession(
                        userPoolId: poolId, username: username, sessionId: id, linked: .linked)
                }
            }
            return outcome(single.isEmpty ? "nothingToDo" : "done", "\(single.count) managed-login sessions revoked")
        case .password:
            return try resetPassword(calls, outcome)
        case .disable:
            try calls.update { try service.adminDisableUser(userPoolId: poolId, username: username) }
            return outcome("done")
        case .signOut:
            try calls.update { try service.adminUserGlobalSignOut(userPoolId: poolId, username: username) }
            return outcome("done", "refresh tokens revoked")
        }
    }

    private func resetPassword(_ calls: StepCalls, _ outcome: (String, String?) -> StepOutcome) throws -> StepOutcome {
        let (poolId, username, service) = (calls.poolId, calls.username, calls.service)
        if let temporary = request.temporaryPassword {
            try calls.update {
                try service.adminSetUserPassword(
                    userPoolId: poolId, username: username, password: temporary, permanent: false)
            }
            return outcome("done", "temporary password set: it must be changed at the next sign-in")
        }
        var user: AdminUser?
        try calls.read { user = try service.adminGetUser(userPoolId: poolId, username: username) }
        if user?.userStatus == "RESET_REQUIRED" { return outcome("nothingToDo", "the password was already reset") }
        if user?.userStatus == "FORCE_CHANGE_PASSWORD" {
            return outcome(
                "notPossible",
                "the user has only a temporary password (FORCE_CHANGE_PASSWORD), which the service does not reset: it is UNCHANGED; run again with --temporary-password-stdin"
            )
        }
        guard user?.hasVerifiedChannel == true else {
            return outcome(
                "notPossible",
                "no verified email or phone for the reset code: the password is UNCHANGED; run again with --temporary-password-stdin"
            )
        }
        do {
            try calls.update { try service.adminResetUserPassword(userPoolId: poolId, username: username) }
        } catch let error as CognitoError where error.refusal == .userDisabled {
            return outcome(
                "notPossible",
                "the user is already disabled and the service resets no disabled user's password: the password is UNCHANGED; run again with --temporary-password-stdin"
            )
        } catch let error as CognitoError where error.refusal?.deniesAuthorization == true {
            return outcome(
                "notPossible",
                "the service refused the reset (\(Investigator.bounded(error.message))): the password is UNCHANGED; run again with --temporary-password-stdin"
            )
        }
        return outcome("done", "password reset: a code went to the verified email or phone")
    }

    private func markEvents(_ calls: StepCalls, _ outcome: (String, String?) -> StepOutcome) throws -> StepOutcome {
        let (poolId, username, service) = (calls.poolId, calls.username, calls.service)
        var ids = request.invalidEvents
        if let since = request.invalidSince {
            do {
                var listed: [AuthEvent] = []
                try calls.read {
                    listed = try service.adminListUserAuthEvents(
                        userPoolId: poolId, username: username, maximum: request.events.maximum
                    ) { event in event.creationDate.map { Date(timeIntervalSince1970: $0) >= since } ?? true }.events
                }
                ids += listed.compactMap(\.eventId)
            } catch let error as CognitoError where Investigator.notKept(error) {
                return outcome("notPossible", "the pool keeps no sign-in events (no threat protection)")
            }
        }
        var marked = 0
        var refused: [String] = []
        for id in ids {
            do {
                try calls.update {
                    try service.adminUpdateAuthEventFeedback(
                        userPoolId: poolId, username: username, eventId: id, valid: false)
                }
                marked += 1
            } catch let error as CognitoError where Investigator.notKept(error) || error.refusal == .resourceNotFound {
                refused.append(Investigator.bounded(id) + ": " + (error.errorType ?? "refused"))
            }
        }
        let detail =
            "\(marked) events marked invalid"
            + (refused.isEmpty ? "" : "; not marked: " + refused.prefix(10).joined(separator: ", "))
        return outcome(marked == 0 && !refused.isEmpty ? "notPossible" : (ids.isEmpty ? "nothingToDo" : "done"), detail)
    }
}

/// One user's calls within a step: paced in their category, request ids kept.
package final class StepCalls {
    package let service: CognitoService
    package let poolId: String
    package let username: String
    let operation: BulkOperation
    package var requestIds: [String] = []

    init(service: CognitoService, poolId: String, username: String, operation: BulkOperation) {
        self.service = service
        self.poolId = poolId
        self.username = username
        self.operation = operation
    }

    /// A changing call, in the user-update bucket.
    package func update(_ call: () throws -> Void) throws { try paced(operation.updates, call) }
    /// A reading call, in the user-read bucket.
    package func read(_ call: () throws -> Void) throws { try paced(operation.reads, call) }

    private func paced(_ pacer: Pacer, _ call: () throws -> Void) throws {
        try operation.paced(pacer) {
            defer { if let id = service.lastRequestId { requestIds.append(id) } }
            try call()
        }
    }
}

extension ContainStep {
    /// The calls a user's steps cost in the update and read buckets (a device and a session
    /// counted for each list; the exposure's three reads after), for the plan's duration.
    package static func callEstimate(_ steps: [ContainStep]) -> (updates: Int, reads: Int) {
        var total = (updates: 0, reads: 3)
        for step in steps {
            switch step {
            case .snapshot: total.reads += 6
            case .mfa: total.updates += 2
            case .feedback, .devices, .sessions, .password:
                total.updates += 1
                total.reads += 1
            case .disable, .signOut: total.updates += 1
            }
        }
        return total
    }
}

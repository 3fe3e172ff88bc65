import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ops sessions revoke --user NAME ID...`: an operator ends single sessions of any user
/// (AdminRevokeUserSession, SigV4), each one's outcome appended to the ops audit log before the
/// next, as `ops signout` records every user.
package struct AdminSessionRevoke {
    package let settings: Settings
    package let username: String
    package let ids: [String]
    package let linked: Bool
    package let confirmed: Bool
    /// The audit log asked for; nil: next to the ops checkpoints.
    package let auditLog: String?

    package init(
        settings: Settings, username: String, ids: [String], linked: Bool, confirmed: Bool, auditLog: String?
    ) {
        self.settings = settings
        self.username = username
        self.ids = ids
        self.linked = linked
        self.confirmed = confirmed
        self.auditLog = auditLog
    }

    package func run(in context: CommandContext) throws {
        let admin = try AdminService(context: context)
        let path: String
        if let auditLog {
            path = auditLog
        } else {
            let safePool = String(admin.poolId.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
            path = try OpsStateDirectory.open(environment: context.environment).auditPath("\(safePool).sessions-revoke")
        }
        let audit = try OpsAuditLog(path: path)
        try Confirmation.require(
            "End \(ids.count == 1 ? "session \(ids[0])" : "\(ids.count) sessions") of \(username) in \(admin.poolId)? [y/N] ",
            confirmed: confirmed, console: context.console, withoutTerminal: "this ends sessions and cannot be undone")
        let who = OpsAuditLog.Entry.Operator.current(
            accessKeyId: admin.credentials.accessKeyId, environment: context.environment)
        var results: [SessionRevokeOutcome] = []
        for id in ids {
            let outcome: SessionRevokeOutcome
            var error: String?
            do {
                try admin.service.adminRevokeUserSession(
                    userPoolId: admin.poolId, username: username, sessionId: id, linked: linked ? .linked : .none)
                outcome = SessionRevokeOutcome(sessionId: id, result: .ended)
            } catch let failure as CognitoError where failure.refusal == .resourceNotFound {
                outcome = SessionRevokeOutcome(sessionId: id, result: .alreadyGone)
            } catch let failure as CognitoError {
                // The user, the pool or the credentials refused: every other session would be too.
                if let refusal = AdminService.refusal(failure, username: username, poolId: admin.poolId) {
                    try record(audit, id, "failed", failure.errorType, admin, who, context)
                    context.emit(
                        SessionRevokeReport(
                            user: username, userPoolId: admin.poolId, results: results, lifetime: 0, now: context.now())
                    )
                    throw refusal
                }
                error = failure.errorType ?? failure.kind.rawValue
                outcome = SessionRevokeOutcome(
                    sessionId: id, result: .refused, reason: String(failure.message.prefix(300)),
                    errorType: failure.errorType)
            }
            let result = outcome.result == .refused ? "failed" : outcome.result == .ended ? "ended" : "notFound"
            try record(audit, id, result, error, admin, who, context)
            results.append(outcome)
        }
        let lifetime = AdminSignOut.tokenLifetime(admin.service, poolId: admin.poolId, clientId: settings.clientId)
        var report = SessionRevokeReport(
            user: username, userPoolId: admin.poolId, results: results, lifetime: lifetime.seconds, now: context.now())
        report.textMessages.append("Audit log: \(audit.path)")
        context.emit(report)
        if let failure = report.failure { throw failure }
    }

    private func record(
        _ audit: OpsAuditLog, _ id: String, _ result: String, _ error: String?, _ admin: AdminService,
        _ who: OpsAuditLog.Entry.Operator, _ context: CommandContext
    ) throws {
        let requestIds = admin.service.lastRequestId.map { [$0] } ?? []
        var entry = OpsAuditLog.Entry(
            time: context.now(), pool: admin.poolId, user: username,
            action: linked ? "revokeSession+linked" : "revokeSession",
            result: result, error: error, requestId: requestIds.last, requestIds: requestIds, operator: who)
        entry.session = id
        _ = try audit.append(try OpsAuditLog.line(entry))
    }
}

import ArgumentParser
import AuthctlCore
import CognitoClient

/// `authctl ops restore --user NAME`: a contained user enabled again once it has a new password.
struct OpsRestore: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Enable a contained user again (AdminEnableUser) once it has set a new password.",
        discussion: """
            Refuses (exit 65) while AdminGetUser still says RESET_REQUIRED or FORCE_CHANGE_PASSWORD: \
            the user has not chosen a new password yet, and the old one may be the attacker's \
            (--force enables anyway). The audit line and the incident record (--record, default: \
            the one `ops contain --user NAME` wrote) name the incident. A user with passkeys should \
            stay disabled until the user has removed them. Exit codes: 0, 65, 69, 77, 78.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("The user to enable.", valueName: "username"))
    var user: String

    @Flag(help: "Enable even though the user has not set a new password yet.")
    var force = false

    @Option(help: ArgumentHelp("The incident record (default: ops contain --user NAME's).", valueName: "path"))
    var record: String?

    @Option(
        help: ArgumentHelp(
            "Append the audit line here (default: ops contain --user NAME's audit log).", valueName: "path"))
    var auditLog: String?

    func execute(in context: CommandContext) throws {
        let admin = try AdminService(context: context)
        let state = try OpsStateDirectory.open(environment: context.environment)
        let stem = OpsStateDirectory.stem(poolId: admin.poolId, action: .contain, selection: .users([user]))
        let recordPath = record ?? IncidentRecord.defaultPath(state, stem)
        let incident = IncidentRecord.incidentId(at: recordPath)
        let name = UntrustedText(user).description
        do {
            let found = try admin.service.adminGetUser(userPoolId: admin.poolId, username: user)
            if found.awaitsNewPassword && !force {
                throw AuthctlError(
                    .inputRejected,
                    "\(name) is still \(UntrustedText(found.userStatus ?? "")): the user has not set a new password, so the old one (perhaps the attacker's) may still be the way in; nothing was changed (--force enables anyway)"
                )
            }
            try admin.service.adminEnableUser(userPoolId: admin.poolId, username: user)
        } catch let error as CognitoError {
            throw AdminService.refusal(error, username: name, poolId: admin.poolId)
                ?? AuthctlError.from(error, endpoint: admin.endpoint)
        }
        let requestId = admin.service.lastRequestId
        let who = OpsAuditLog.Entry.Operator.current(
            accessKeyId: admin.credentials.accessKeyId, environment: context.environment)
        let audit = try OpsAuditLog(path: auditLog ?? state.auditPath(stem))
        _ = try audit.append(
            try OpsAuditLog.line(
                .init(
                    time: context.now(), pool: admin.poolId, user: user, action: "restore", result: "enabled",
                    requestId: requestId, requestIds: requestId.map { [$0] } ?? [], operator: who,
                    detail: incident.map { "incident \($0)" } ?? "no incident record")))
        if let incident {
            struct Restored: Encodable {
                var requestId: String?
                var forced: Bool
            }
            try IncidentRecord(path: recordPath, id: incident).note(
                "restore", user: user, at: context.now(), Restored(requestId: requestId, forced: force))
        }
        context.emit(
            RestoreReport(
                user: user, userPoolId: admin.poolId, enabled: true, incident: incident, forced: force,
                textMessages: [
                    "\(name) is enabled again in \(admin.poolId)\(incident.map { " (incident \($0))" } ?? "")."
                ]))
    }
}

struct RestoreReport: CommandReport {
    var user: String
    var userPoolId: String
    var enabled: Bool
    @Nullable var incident: String?
    var forced: Bool
    var textMessages: [String] = []

    enum CodingKeys: String, CodingKey { case user, userPoolId, enabled, incident, forced }
}

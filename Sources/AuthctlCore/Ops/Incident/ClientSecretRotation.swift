import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `ops contain --client-id`: a leaked app-client secret replaced. The service keeps two secrets
/// at most and never deletes the last, so: the oldest deleted first when two are there, a new one
/// added (handed to `deliver` at once, never kept), checked with a client-credentials token where
/// the client and a managed-login domain allow it, then every old one deleted. One audit line a
/// step, with its request id.
package struct ClientSecretRotation {
    package let service: CognitoService
    package let poolId: String
    package let clientId: String
    package let audit: OpsAuditLog
    package let who: OpsAuditLog.Entry.Operator
    package let now: () -> Date

    package init(
        service: CognitoService, poolId: String, clientId: String, audit: OpsAuditLog,
        who: OpsAuditLog.Entry.Operator, now: @escaping () -> Date
    ) {
        self.service = service
        self.poolId = poolId
        self.clientId = clientId
        self.audit = audit
        self.who = who
        self.now = now
    }

    /// What the check of the new secret found.
    package enum Check {
        case passed
        /// Not checkable (no domain, the client has no client-credentials grant): why.
        case notChecked(String)
        /// The new secret was refused: the old ones are kept.
        case failed(String)
    }

    package struct Outcome {
        package var newSecretId: String
        package var deleted: [String]
        package var check: Check
        package var tokenLifetime: (seconds: Double, assumedBecause: String?)
    }

    package func secrets() throws -> [ClientSecretDescriptor] {
        try service.listUserPoolClientSecrets(userPoolId: poolId, clientId: clientId)
    }

    package func rotate(deliver: (String) throws -> Void, check: (String) -> Check) throws -> Outcome {
        var old = try secrets().sorted { ($0.clientSecretCreateDate ?? 0) < ($1.clientSecretCreateDate ?? 0) }
            .compactMap(\.clientSecretId)
        var deleted: [String] = []
        if old.count >= 2 {
            try delete(old[0])
            deleted.append(old.removeFirst())
        }
        guard let added = try service.addUserPoolClientSecret(userPoolId: poolId, clientId: clientId),
            let value = added.clientSecretValue, let id = added.clientSecretId
        else {
            throw AuthctlError(.unexpected, "AddUserPoolClientSecret answered without the new secret")
        }
        try line("add-secret", "done", detail: "secret \(Investigator.bounded(id)) added")
        try deliver(value)
        let checked = check(value)
        switch checked {
        case .passed: try line("check", "done", detail: "a client-credentials token was issued with the new secret")
        case .notChecked(let why): try line("check", "notPossible", detail: why)
        case .failed(let why):
            try line("check", "failed", detail: why)
            return Outcome(newSecretId: id, deleted: deleted, check: checked, tokenLifetime: lifetime())
        }
        for secret in old {
            try delete(secret)
            deleted.append(secret)
        }
        return Outcome(newSecretId: id, deleted: deleted, check: checked, tokenLifetime: lifetime())
    }

    private func delete(_ secretId: String) throws {
        try service.deleteUserPoolClientSecret(userPoolId: poolId, clientId: clientId, secretId: secretId)
        try line("delete-secret", "done", detail: "secret \(Investigator.bounded(secretId)) deleted")
    }

    private func lifetime() -> (seconds: Double, assumedBecause: String?) {
        AdminSignOut.tokenLifetime(service, poolId: poolId, clientId: clientId)
    }

    private func line(_ step: String, _ result: String, detail: String) throws {
        let id = service.lastRequestId
        _ = try audit.append(
            try OpsAuditLog.line(
                .init(
                    time: now(), pool: poolId, user: "client:" + clientId, action: "contain-client:" + step,
                    result: result, requestId: id, requestIds: id.map { [$0] } ?? [], operator: who, detail: detail)))
    }
}

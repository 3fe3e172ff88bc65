import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `signout --global --user NAME`: an operator forces any user of the pool out of every session
/// with AdminUserGlobalSignOut, signed with SigV4. Needs no stored session; touches no local store.
package struct AdminSignOut {
    package let settings: Settings
    package let username: String
    package let confirmed: Bool

    /// Default token lifetime of an app client (access and id), used when the client's own cannot be read.
    package static let defaultTokenLifetime: Double = 3600

    package func run(in context: CommandContext) throws {
        let admin = try AdminService(context: context)
        let (poolId, region, endpoint, credentials, source) = (
            admin.poolId, admin.region, admin.endpoint, admin.credentials, admin.source
        )
        try Confirmation.require(
            "Sign out \(username) on ALL devices? [y/N] ", confirmed: confirmed, console: context.console)
        let signed = admin.service

        do {
            try OpsAction.signOut.perform(on: signed, poolId: poolId, username: username)
        } catch {
            context.emit(AdminSignOutReport(globalSignOut: "failed", user: username, userPoolId: poolId))
            let cognito = error as? CognitoError
            throw cognito.map {
                Self.failure(
                    $0, username: username, poolId: poolId, endpoint: endpoint,
                    mayHaveActed: $0.outcomeUnknown)
            }
                ?? AuthctlError.from(error, endpoint: endpoint)
        }

        let at = context.now()
        let local = LocalOperator(environment: context.environment)
        context.console.message(
            "audit: AdminUserGlobalSignOut user=\(username) pool=\(poolId) region=\(region) by=\(credentials.accessKeyId) (local user \(local.user), credentials from \(source)\(local.claimNote)) at=\(Format.iso8601(at))"
        )
        let lifetime = Self.tokenLifetime(signed, poolId: poolId, clientId: settings.clientId)
        let exposureUntil = at.addingTimeInterval(lifetime.seconds)
        var report = AdminSignOutReport(
            user: username, userPoolId: poolId, signedOutAt: at, exposureUntil: exposureUntil,
            tokenLifetimeSeconds: Format.wholeSeconds(lifetime.seconds), exposureAssumed: lifetime.assumedBecause != nil
        )
        report.textMessages = ["Signed \(username) out of every device in \(poolId). Refresh tokens are revoked now."]
        if let reason = lifetime.assumedBecause {
            report.textMessages.append(
                "Access and id tokens issued before now keep passing offline JWT checks for up to the app client's token lifetime, 1 hour by default (assumed: \(reason)): until about \(Format.localTime(exposureUntil)), longer if the client is set otherwise."
            )
            report.jsonMessages = ["authctl: the token lifetime is assumed to be the default 1 hour: \(reason)"]
        } else {
            report.textMessages.append(
                "Access and id tokens issued before now keep passing offline JWT checks for up to the app client's token lifetime (\(Format.duration(lifetime.seconds))): until \(Format.localTime(exposureUntil)) at the latest."
            )
        }
        report.textMessages.append(Self.notContainment(username: username))
        context.emit(report)
    }

    /// The one added line: a sign-out ends sessions, the password still signs in.
    package static func notContainment(username: String) -> String {
        "A sign-out is not containment: the same password signs straight back in. To contain the account (evidence, MFA, devices, password, disable): authctl ops contain --user \(UntrustedText(ShellWord.quoted(username))) --execute"
    }

    /// The longer of the app client's access- and id-token lifetimes (DescribeUserPoolClient,
    /// signed like the sign-out), else the default hour with the reason it is assumed.
    package static func tokenLifetime(_ service: CognitoService, poolId: String, clientId: String?) -> (
        seconds: Double, assumedBecause: String?
    ) {
        guard let clientId else {
            return (
                defaultTokenLifetime, "no app client id is configured (--client-id, AUTHCTL_CLIENT_ID) to read it from"
            )
        }
        do {
            guard let client = try service.describeUserPoolClient(userPoolId: poolId, clientId: clientId).userPoolClient
            else {
                return (defaultTokenLifetime, "DescribeUserPoolClient answered without the app client")
            }
            return (max(client.accessTokenLifetime, client.idTokenLifetime), nil)
        } catch {
            return (defaultTokenLifetime, "DescribeUserPoolClient for \(clientId) failed: \(error)")
        }
    }

    package static func failure(
        _ error: CognitoError, username: String, poolId: String, endpoint: String, mayHaveActed: Bool
    ) -> AuthctlError {
        if let refusal = AdminService.refusal(error, username: username, poolId: poolId) { return refusal }
        let failure = AuthctlError.from(error, endpoint: endpoint)
        // A refusal the service explained decided the matter; anything else (unreachable, throttled,
        // failed, an answer this client cannot place) leaves the user's sessions to be described.
        let explained =
            error.kind == .service && !error.isThrottling && !error.isServerError
            && (error.refusal ?? .other) != .other
        guard !explained else { return failure }
        if mayHaveActed {
            return AuthctlError(
                failure.code,
                "\(failure.message)\nThe request may have reached Cognito, so \(username)'s sessions may or may not have been revoked. Run the same command again (repeating it is harmless) to be sure."
            )
        }
        return AuthctlError(failure.code, "\(failure.message)\nNothing was revoked: \(username) is still signed in.")
    }

    package init(settings: Settings, username: String, confirmed: Bool) {
        self.settings = settings
        self.username = username
        self.confirmed = confirmed
    }
}

/// `signout --global --user NAME --output json`; printed on failure too, with `globalSignOut: failed`.
package struct AdminSignOutReport: CommandReport {
    package var signedOutLocally = false
    package var globalSignOut = "ok"
    package var revokeToken = "skipped"
    package var user: String
    package var userPoolId: String
    // Absent values are written as null: scripts see every key in every answer.
    @Nullable package var signedOutAt: Date? = nil
    @Nullable package var exposureUntil: Date? = nil
    /// The lifetime the exposure window is computed with.
    @Nullable package var tokenLifetimeSeconds: Int? = nil
    /// True when that lifetime is the default hour, not read from the app client.
    @Nullable package var exposureAssumed: Bool? = nil
    /// For the person (a failure's report says nothing: the error does).
    package var textMessages: [String] = []
    package var jsonMessages: [String] = []

    package enum CodingKeys: String, CodingKey {
        case signedOutLocally, globalSignOut, revokeToken, user, userPoolId, signedOutAt, exposureUntil,
            tokenLifetimeSeconds, exposureAssumed
    }
}

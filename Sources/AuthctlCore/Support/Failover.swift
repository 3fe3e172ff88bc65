import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Multi-Region failover (`--failover-region`, `--failover-endpoint`): a sign-in, a refresh or a
/// sign-out (RevokeToken, GlobalSignOut) that the primary region's endpoint leaves unanswered (no
/// connection, a timeout, a 5xx) is made once more at the replica. A refusal (4xx) never fails
/// over, writes never go to the replica, and a sign-in starts again there from its first step: a
/// challenge session never crosses regions. The managed login does not fail over here (Cognito
/// moves a custom domain by DNS: `managedLoginNote`).
package enum Failover {
    /// No connection, a dropped one, a timeout, or a 5xx: the primary did not answer.
    package static func isOutage(_ kind: TransportError.Kind) -> Bool {
        kind == .notConnected || kind == .connection || kind == .timeout
    }

    package static func isOutage(_ error: CognitoError) -> Bool {
        error.isServerError || (error.kind == .transport && error.transportKind.map(isOutage) == true)
    }

    package static func notice(
        _ what: String, primary: ClientSettings, replica: ClientSettings.Replica, because why: String
    ) -> String {
        "authctl: the primary region (\(primary.region)) did not answer (\(why)); \(what) at the replica in \(replica.region)"
    }

    /// A managed-login endpoint's failure (a browser sign-in's code exchange, its refresh or
    /// revocation, `token --client-credentials`); with a replica configured and the domain not
    /// answering (`OAuthError.isServiceFailure`), also what failover can and cannot do there.
    package static func managedLoginFailure(
        _ error: OAuthError, domain: String, settings: Settings,
        otherWay: String? = nil
    ) -> AuthctlError {
        var failure = AuthctlError.from(oauth: error, domain: domain)
        if error.isServiceFailure && settings.hasReplica {
            failure.message += "\n" + managedLoginNote(domain: domain, otherWay: otherWay)
        }
        return failure
    }

    /// Cognito fails a managed-login domain over by DNS only: a custom domain's failover routing
    /// (DescribeUserPoolDomain's Routing.Failover: a Route 53 health check and the secondary
    /// region) sends the same host name to the replica; a prefix domain belongs to its region.
    /// authctl has no second domain to try, and says so.
    package static func managedLoginNote(domain: String, otherWay: String?) -> String {
        "authctl does not fail the managed login over to the replica: Cognito moves a custom domain to the replica by DNS "
            + "(the domain's failover routing, on a Route 53 health check), so \(UntrustedText(domain)) answers from the replica once DNS has "
            + "switched; a prefix domain (*.auth.<region>.amazoncognito.com) serves its own region only. Try again in a few minutes"
            + (otherWay.map { "; \($0)" } ?? "") + "."
    }

    /// Said after a write failed while the primary is out and a replica is configured.
    package static func readOnlyNote(replicaRegion: String) -> String {
        "The replica in \(replicaRegion) is read-only (sign-in, refresh and sign-out only): this change waits for the primary region."
    }
}

/// A command that changes the directory (sign-up, passwords, attributes, MFA, devices): it never
/// goes to the replica, and when the primary is out it says the replica is read-only.
package protocol DirectoryWrite {}

/// The transport of a sign-in's requests to the primary, noting an outage (`Failover.isOutage`)
/// whatever error the flow makes of it.
package final class OutageWitness: HTTPTransport {
    private let inner: HTTPTransport
    /// What the outage was, once there was one.
    package private(set) var outage: String?

    package init(_ inner: HTTPTransport) { self.inner = inner }

    package func send(_ request: HTTPRequest) throws -> HTTPResponse {
        do {
            let response = try inner.send(request)
            // The last answer counts: a 5xx retried into a refusal is a refusal.
            outage = (500...599).contains(response.status) ? "HTTP \(response.status)" : nil
            return response
        } catch let error as TransportError {
            if Failover.isOutage(error.kind) { outage = error.description }
            throw error
        }
    }
}

import CognitoClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Multi-Region failover (`--failover-region`, `--failover-endpoint`): a sign-in or a refresh
/// that the primary region's endpoint leaves unanswered (no connection, a timeout, a 5xx) is made
/// once more at the replica. A refusal (4xx) never fails over, writes never go to the replica, and
/// a sign-in starts again there from its first step: a challenge session never crosses regions.
enum Failover {
    /// No connection, a dropped one, a timeout, or a 5xx: the primary did not answer.
    static func isOutage(_ kind: TransportError.Kind) -> Bool {
        kind == .notConnected || kind == .connection || kind == .timeout
    }

    static func isOutage(_ error: CognitoError) -> Bool {
        error.isServerError || (error.kind == .transport && error.transportKind.map(isOutage) == true)
    }

    static func notice(_ what: String, primary: ClientSettings, replica: ClientSettings.Replica, because why: String) -> String {
        "authctl: the primary region (\(primary.region)) did not answer (\(why)); \(what) at the replica in \(replica.region)"
    }

    /// Said after a write failed while the primary is out and a replica is configured.
    static func readOnlyNote(replicaRegion: String) -> String {
        "The replica in \(replicaRegion) is read-only (sign-in and refresh only): this change waits for the primary region."
    }
}

/// A command that changes the directory (sign-up, passwords, attributes, MFA, devices): it never
/// goes to the replica, and when the primary is out it says the replica is read-only.
protocol DirectoryWrite {}

/// The transport of a sign-in's requests to the primary, noting an outage (`Failover.isOutage`)
/// whatever error the flow makes of it.
final class OutageWitness: HTTPTransport {
    private let inner: HTTPTransport
    /// What the outage was, once there was one.
    private(set) var outage: String?

    init(_ inner: HTTPTransport) { self.inner = inner }

    func send(_ request: HTTPRequest) throws -> HTTPResponse {
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

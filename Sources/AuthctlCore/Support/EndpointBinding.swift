import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A stored session talks only to the endpoint it was signed in with: its tokens were issued
/// there, and another endpoint (a stray AWS_ENDPOINT_URL, an emulator's, an attacker's) must never
/// be sent them, nor be believed when it refuses them (that would end a good session).
extension ClientSettings {
    /// Refuses (exit 78, before any request) when this command's endpoint is not `session`'s.
    package func checkBound(to session: StoredSession) throws {
        // Primary and replica are one pair: a session either issued works with both, and fails
        // over only to the replica configured when it was signed in.
        if let replica, !(session.replicaEndpoint.map { Self.sameEndpoint($0, replica.endpoint) } ?? false) {
            let recorded = session.replicaEndpoint.map { "the replica at \($0)" } ?? "no replica"
            throw AuthctlError(
                .configuration,
                """
                the session of profile \(session.profile) was signed in with \(recorded), but this command is configured \
                to fail over to \(replica.endpoint) (--failover-region, --failover-endpoint, AUTHCTL_FAILOVER_REGION, \
                AUTHCTL_FAILOVER_ENDPOINT or failover_region); a session's tokens go only to the endpoints it was signed in \
                with, so nothing was sent. Use that replica, or sign in again with this one: authctl signin
                """)
        }
        guard !Self.sameEndpoint(endpoint, session.endpoint),
            !(replica.map { Self.sameEndpoint($0.endpoint, session.endpoint) } ?? false)
        else { return }
        throw AuthctlError(
            .configuration,
            """
            the session of profile \(session.profile) was signed in at \(session.endpoint), but this command is \
            configured for \(endpoint) (--endpoint, AUTHCTL_ENDPOINT, AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER, \
            AWS_ENDPOINT_URL, the profile's endpoint, or the region's default); a session's tokens go only to the \
            endpoint that issued them, so nothing was sent. Use that endpoint, or sign in at this one: authctl signin
            """)
    }

    /// The same endpoint: scheme and host compared without case, the scheme's default port made
    /// explicit, a trailing slash ignored.
    package static func sameEndpoint(_ a: String, _ b: String) -> Bool {
        guard let left = URLComponents(string: a), let right = URLComponents(string: b) else { return a == b }
        func key(_ url: URLComponents) -> [String] {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : -1)
            let path = url.path.hasSuffix("/") ? String(url.path.dropLast()) : url.path
            return [scheme, url.host?.lowercased() ?? "", String(port), path, url.query ?? ""]
        }
        return key(left) == key(right)
    }
}

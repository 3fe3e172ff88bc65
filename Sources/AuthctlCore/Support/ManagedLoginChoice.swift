import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The managed-login domain a command was given (`--domain`), resolved against the settings.
package struct ManagedLoginChoice {
    package var domain: String?

    /// The domain from --domain, else AUTHCTL_DOMAIN, else the profile; checked. Missing: exit 78 naming the ways to set it.
    package func resolve(_ settings: Settings) throws -> ManagedLoginDomain {
        guard let domain = domain.flatMap({ $0.isEmpty ? nil : $0 }) ?? settings.domain else {
            throw AuthctlError(
                .configuration,
                """
                \(settings.unknownProfileNote)no managed-login domain for profile \(settings.profile): pass --domain, set AUTHCTL_DOMAIN, \
                or set domain in [profiles.\(settings.profile)] of \(settings.configFile) (authctl configure --domain URL)
                """)
        }
        try Self.check(domain)
        return ManagedLoginDomain(domain)
    }

    /// An https:// URL with a host and no query; plain http:// only to this machine (an emulator),
    /// as for --endpoint: codes and tokens would cross the network in clear.
    package static func check(_ domain: String) throws {
        let origin = "(from --domain, AUTHCTL_DOMAIN or the config file)"
        guard let url = URLComponents(string: domain), let scheme = url.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty,
            url.query == nil, url.fragment == nil
        else {
            throw AuthctlError(
                .configuration, "managed-login domain \"\(domain)\" is not an https:// URL with a host \(origin)")
        }
        if scheme == "http" && !ClientSettings.isLoopback(host) {
            throw AuthctlError(
                .configuration,
                """
                managed-login domain \(domain) is plain http:// to another machine: codes and tokens would cross the network \
                unencrypted; use https:// (plain http:// is for an emulator on this machine) \(origin)
                """)
        }
    }

    package init(domain: String? = nil) {
        self.domain = domain
    }
}

/// Scopes as given: repeated options, each possibly space-separated; order kept, duplicates dropped.
package enum ScopeList {
    package static func normalized(_ given: [String]) -> [String] {
        var seen = Set<String>()
        return given.flatMap { $0.split(separator: " ").map(String.init) }.filter { seen.insert($0).inserted }
    }
}

extension AuthctlError {
    /// What an answer of the managed login means to the person, and its exit code: a refused
    /// grant is 77, a misconfigured app client 78, the service failing or unreachable 69.
    package static func from(oauth error: OAuthError, domain: String?) -> AuthctlError {
        let place = domain.map { " at \($0)" } ?? ""
        let words = UntrustedText(error.description).description
        switch error.code {
        case .invalidGrant:
            return AuthctlError(
                .notAuthorized, "the managed login\(place) refused the grant (\(words)); run: authctl signin --browser")
        case .accessDenied:
            return AuthctlError(.notAuthorized, "the sign-in was refused (\(words)); nothing was stored")
        case .stateMismatch, .nonceMismatch:
            return AuthctlError(.notAuthorized, words)
        case .invalidClient:
            return AuthctlError(
                .configuration,
                """
                the managed login\(place) refused the app client's credentials (\(words)): check --client-id and the client \
                secret (AUTHCTL_CLIENT_SECRET, or authctl configure --client-secret-stdin)
                """)
        case .unauthorizedClient, .unsupportedGrantType, .invalidScope, .invalidRequest, .unsupportedTokenType:
            return AuthctlError(
                .configuration,
                "the managed login\(place) refused the request as the app client is set up (\(words)); check its OAuth flows, scopes and callback URLs"
            )
        case .throttled:
            return AuthctlError(
                .throttled, "Too many requests to the managed login\(place); wait a few minutes and try again")
        case .unreachable:
            return AuthctlError(.unavailable, "cannot reach the managed login\(place): \(words)")
        case .serverError, .temporarilyUnavailable, .unexpectedAnswer:
            return AuthctlError(
                .unavailable, "the managed login\(place) gave an unusable answer: \(words) (is the domain right?)")
        case .otherServiceError:
            return AuthctlError(.unexpected, "the managed login\(place) answered: \(words)")
        }
    }
}

import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Format {
    /// `1 hour`, `2 hours`, `30 minutes`, `90 seconds`.
    package static func duration(_ seconds: Double) -> String {
        let whole = Format.wholeSeconds(seconds)
        if whole >= 3600 && whole % 3600 == 0 { return counted(whole / 3600, "hour") }
        if whole >= 60 && whole % 60 == 0 { return counted(whole / 60, "minute") }
        return counted(whole, "second")
    }

    /// `1 user`, `2 users`, `0 users`.
    package static func counted(_ count: Int, _ noun: String) -> String {
        count == 1 ? "1 \(noun)" : "\(count) \(noun)s"
    }
}

extension StoredSession {
    /// The longest lifetime (`exp` − `iat`) of this session's access and id tokens: how long a
    /// token issued now, on any device, keeps passing offline checks. Without `iat`, measured
    /// from when this device received the tokens.
    package var tokenLifetime: Double {
        let lifetimes = [accessToken, idToken].compactMap { token -> Double? in
            guard let claims = try? JWTClaims(token: token), let expiry = claims.expiresAt else { return nil }
            return expiry.timeIntervalSince(claims.issuedAt ?? issuedAt)
        }
        return lifetimes.max() ?? accessTokenExpiresAt.timeIntervalSince(issuedAt)
    }

    /// The last instant at which a token of this session passes an offline JWT check.
    package var tokensValidUntil: Date {
        let idExpiry = (try? JWTClaims(token: idToken))?.expiresAt
        return max(accessTokenExpiresAt, idExpiry ?? accessTokenExpiresAt)
    }
}

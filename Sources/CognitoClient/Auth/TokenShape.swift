#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a token from outside must look like before anything keeps or hands it on: a token with
/// a newline made `token` print two lines, and control bytes reached `exec`'s environment.
/// Access and id tokens are compact JWTs: three non-empty base64url parts.
/// A refresh token is opaque (Cognito's is a five-part JWE), so only its alphabet is checked.
public enum TokenShape {
    /// Far beyond any Cognito token (a few KiB), small enough for an environment variable.
    public static let maxLength = 16 * 1024

    /// Three non-empty base64url parts joined by dots.
    public static func isJWT(_ token: String) -> Bool {
        let parts = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        return token.utf8.count <= maxLength && parts.count == 3
            && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(isBase64URL) }
    }

    /// base64url characters and dots only, not empty.
    public static func isOpaqueToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= maxLength
            && token.utf8.allSatisfy { isBase64URL($0) || $0 == UInt8(ascii: ".") }
    }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    /// `token` when it is a JWT, else the decoder's error naming the member (`name`).
    static func checked(_ token: String, as name: String) throws -> String {
        guard isJWT(token) else { throw TokenShapeError(description: "\(name) is not a JWT (three base64url parts)") }
        return token
    }

    /// Nil when every token present has its shape; else which one does not.
    static func problem(accessToken: String, idToken: String?, refreshToken: String?) -> String? {
        if !isJWT(accessToken) { return "the access token is not a JWT (three base64url parts)" }
        if let idToken, !isJWT(idToken) { return "the id token is not a JWT (three base64url parts)" }
        if let refreshToken, !isOpaqueToken(refreshToken) { return "the refresh token holds characters no token has" }
        return nil
    }
}

/// The error a decoder reports for a misshapen token (the caller's own malformed-answer error follows).
struct TokenShapeError: Error, CustomStringConvertible {
    var description: String
}

extension OutsideNumbers {
    /// The longest an access token lives: Cognito's maximum for user-pool and machine tokens is
    /// one day. An `expires_in`/`ExpiresIn` beyond it is no token's: treated as absent.
    public static let maxTokenLifetime: Double = 86_400

    /// The longest identity-pool credentials live (an IAM role session: at most 12 hours).
    public static let maxCredentialsLifetime: Double = 12 * 3600

    /// When an access token from an answer expires: the earlier of its `expires_in`/`ExpiresIn`
    /// and its `exp`, an hour when it says neither, never more than a day from now.
    public static func expiry(ofAccessToken token: String, expiresIn: Int?, now: Date) -> Date {
        let claims = try? JWTClaims(token: token)
        let stated = [expiresIn.map { now.addingTimeInterval(Double($0)) }, claims?.expiresAt].compactMap { $0 }.min()
        return min(stated ?? now.addingTimeInterval(3600), now.addingTimeInterval(maxTokenLifetime))
    }

    /// A token answer's lifetime in whole seconds, when between 0 and one day.
    static func tokenLifetime(_ value: Double?) -> Int? {
        value.flatMap { seconds($0, atMost: maxTokenLifetime) }.map { Int($0) }
    }
}

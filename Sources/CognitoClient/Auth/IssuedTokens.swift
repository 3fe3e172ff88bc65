#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The claims of tokens a sign-in or a refresh hands over, checked before anything keeps them
/// (a browser sign-in stored another pool's and client's tokens, and a
/// refresh answering with another user's tokens was taken, so `token` printed bob's while `status`
/// said alice). Offline: the claims are read from the payload; the signature is `--verify`'s.
public enum IssuedTokens {
    /// Who the tokens being replaced belong to: a refresh must answer for the same user.
    public struct Holder: Sendable, Equatable {
        public var subject: String
        public var username: String?
        public init(subject: String, username: String?) {
            self.subject = subject
            self.username = username
        }
    }

    /// `iss` the pool's issuer, `token_use` access/id, `client_id` (access) and `aud` (id) the app
    /// client, one `sub` in both, and on refresh the `sub` and username of `previous`. Throws a
    /// `JWTError` with code `.claimMismatch` saying which.
    public static func check(
        accessToken: String, idToken: String?, issuer: String, clientId: String,
        previous: Holder? = nil
    ) throws {
        try check(accessToken: accessToken, idToken: idToken, issuers: [issuer], clientId: clientId, previous: previous)
    }

    /// As above, with every issuer the pool's tokens may name (the original and the updated form:
    /// `TokenExpectations.acceptedIssuers`).
    public static func check(
        accessToken: String, idToken: String?, issuers: [String], clientId: String,
        previous: Holder? = nil
    ) throws {
        let access = try claims(accessToken, "access")
        try expect(access, use: "access", client: access.clientId, issuers: issuers, clientId: clientId)
        var subjects = [access.subject]
        var usernames = [access.username]
        if let idToken {
            let id = try claims(idToken, "id")
            try expect(id, use: "id", client: id.audience, issuers: issuers, clientId: clientId)
            subjects.append(id.subject)
            usernames.append(id.username)
        }
        guard let subject = subjects[0], !subject.isEmpty, subjects.allSatisfy({ $0 == subject }) else {
            throw mismatch("the tokens do not name one user (sub)")
        }
        guard let previous else { return }
        guard subject == previous.subject else {
            throw mismatch("the refreshed tokens belong to another user (sub \(subject), not \(previous.subject))")
        }
        if let before = previous.username, let now = usernames.compactMap({ $0 }).first, now != before {
            throw mismatch("the refreshed tokens belong to another user (\(now), not \(before))")
        }
    }

    private static func claims(_ token: String, _ kind: String) throws -> JWTClaims {
        do {
            return try JWTClaims(token: token)
        } catch let error as JWTError {
            throw JWTError(.malformed, message: "the \(kind) token: \(error.message)")
        }
    }

    private static func expect(_ claims: JWTClaims, use: String, client: String?, issuers: [String], clientId: String)
        throws
    {
        guard claims.tokenUse == use else {
            throw mismatch("the \(use) token's token_use is \(claims.tokenUse ?? "missing")")
        }
        guard let issuer = claims.issuer, issuers.contains(issuer) else {
            throw mismatch(
                "the \(use) token was issued by \(claims.issuer ?? "no one"), not the pool (\(issuers.joined(separator: " or ")))"
            )
        }
        guard client == clientId else {
            throw mismatch("the \(use) token was issued to the app client \(client ?? "none"), not \(clientId)")
        }
    }

    private static func mismatch(_ text: String) -> JWTError {
        JWTError(.claimMismatch, message: text)
    }
}

import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When the fresh-token use case may sign in.
package enum SignInWhenNeeded {
    /// Never: no usable session is an error (`exec`, `aws-credentials`, `token` without a way in).
    case never
    /// `token --password-stdin` / `--method`: the stored session when it is fresh and of the user
    /// asked for, else a sign-in as `request` asks, kept (many jobs started together sign in once).
    case unlessFresh(SignInRequest)
    /// `kube-token` when kubectl is interactive: a sign-in on the terminal when there is no session
    /// or it ended (said first); a session of another pool or client stays an error.
    case whenSignedOut(SignInRequest)
}

/// What the fresh-token use case hands out: the token of the type asked for, its session and its
/// expiry, and the service for calls about it (`--verify`).
package struct FreshToken {
    package var session: StoredSession
    package var type: TokenType
    package var token: String
    package var expiresAt: Date
    package var service: CognitoService
    /// Set when a sign-in on the terminal ran (`whenSignedOut`): the command says so on stderr.
    package var signedIn: Bool
}

extension ProfileSession {
    /// *A fresh token of a type, or a sign-in when allowed*: the one use case behind `token`,
    /// `exec`, `kube-token` and `aws-credentials` (kubelogin's GetToken.Do). The session is read
    /// from the store once, refreshed under the profile's lock when the token of `type` (the id
    /// token too, which an app client may give a shorter life) expires within `minValidity`,
    /// signed in when `signIn` allows (every new session kept by the one `keep(signedIn:)`), and
    /// checked offline (issuer, use, client, expiry).
    package func freshToken(_ type: TokenType, minValidity: Double, signIn: SignInWhenNeeded = .never) throws
        -> FreshToken
    {
        var signedIn = false
        let fresh: (session: StoredSession, service: CognitoService)
        switch signIn {
        case .never:
            fresh = try freshSession(minValidity: minValidity, for: type)
        case .unlessFresh(let request):
            fresh = try signInOrReuse(request, minValidity: minValidity, for: type)
        case .whenSignedOut(let request):
            do {
                fresh = try freshSession(minValidity: minValidity, for: type)
            } catch let error as SessionError where error.endsOrUnreadable || error.isNotSignedIn {
                if error.endsOrUnreadable { context.console.message("authctl: \(error.failure.message)") }
                _ = try self.signIn(request).session()
                signedIn = true
                fresh = try freshSession(minValidity: minValidity, for: type)
            }
        }
        let checks = TokenChecks(session: self)
        try checks.checkClaims(fresh.session, type)
        let token = checks.token(fresh.session, type)
        let expiresAt =
            type == .access
            ? fresh.session.accessTokenExpiresAt
            : ((try? JWTClaims(token: token))?.expiresAt ?? fresh.session.accessTokenExpiresAt)
        return FreshToken(
            session: fresh.session, type: type, token: token, expiresAt: expiresAt, service: fresh.service,
            signedIn: signedIn)
    }
}

extension SessionError {
    /// Never signed in on this profile (nothing stored).
    package var isNotSignedIn: Bool {
        if case .notSignedIn = self { return true }
        return false
    }
}

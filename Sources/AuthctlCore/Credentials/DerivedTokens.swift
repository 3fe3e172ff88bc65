import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `token --audience`/`--resource` (and `exec --audience`): what to exchange the session's access
/// token for, as plain values.
package struct DerivedTokenChoice {
    package var target: DerivedTokenRequest.Target
    package var scopes: [String]
    /// The intermediary's own access token (read from stdin): the issued token names it in `act`.
    package var actorToken: String?

    package init(target: DerivedTokenRequest.Target, scopes: [String], actorToken: String? = nil) {
        self.target = target
        self.scopes = scopes
        self.actorToken = actorToken
    }
}

/// A derived token as printed (text: the token alone; `--output json` with its type and expiry).
package struct DerivedTokenOutput: CommandReport {
    package var token: String
    package var type = "access"
    package var tokenType: String
    @Nullable package var audience: String?
    @Nullable package var resource: String?
    package var scopes: [String]
    package var expiresAt: Date
    package var profile: String
    package var textMessages: [String] = []

    package enum CodingKeys: String, CodingKey {
        case token, type, tokenType, audience, resource, scopes, expiresAt, profile
    }

    package var textOutput: [String] { [token] }
    package var jsonMessages: [String] { textMessages }
}

/// Exchanges the stored session's access token with GetDerivedToken, and caches the result in the
/// session's own item (one request for any number of processes asking at once: the first asks
/// under the session's lock, the others find its answer there). With an actor token nothing is
/// cached: each intermediary's token is its own.
package struct DerivedTokens {
    /// The profile's session service: its settings, store and transport.
    package let session: ProfileSession
    private var context: CommandContext { session.context }
    private var settings: Settings { session.settings }

    package init(session: ProfileSession) {
        self.session = session
    }

    package func token(_ choice: DerivedTokenChoice, minValidity: Double) throws -> DerivedTokenOutput {
        let sessions = session
        let scopes = ScopeList.normalized(choice.scopes)
        let request = DerivedTokenRequest(target: choice.target, scopes: scopes)
        let (audience, resource): (String?, String?)
        switch choice.target {
        case .audience(let name): (audience, resource) = (name, nil)
        case .resource(let uri): (audience, resource) = (nil, uri)
        }
        let key = DerivedTokenRecord.key(audience: audience, resource: resource, scopes: scopes)
        let (record, profile) = try sessions.withFreshSession { session, service in
            let app = try sessions.appClient(try sessions.clientSettings(for: session))
            if let actor = choice.actorToken {
                return (
                    try exchange(request, subject: session.accessToken, app: app, actor: actor, service),
                    session.profile
                )
            }
            return try sessions.withLockedSession { locked in
                guard var current = try locked.load() else { throw SessionError.notSignedIn(profile: settings.profile) }
                let now = context.now()
                if let cached = current.derivedTokens?[key], cached.expiresAt.timeIntervalSince(now) > minValidity {
                    context.trace?.record(.cache(.derivedToken, hit: true))
                    return (cached, current.profile)
                }
                context.trace?.record(.cache(.derivedToken, hit: false))
                let fresh = try exchange(request, subject: current.accessToken, app: app, actor: nil, service)
                var kept = (current.derivedTokens ?? [:]).filter { $0.value.expiresAt > now }
                kept[key] = fresh
                while kept.count > DerivedTokenRecord.maxKept,
                    let soonest = kept.min(by: { $0.value.expiresAt < $1.value.expiresAt })
                {
                    kept[soonest.key] = nil
                }
                current.derivedTokens = kept
                do {
                    try locked.save(current)
                } catch {
                    context.console.message(
                        "authctl: warning: the token could not be cached (\(AuthctlError.from(error).message)); the next call asks again."
                    )
                }
                return (fresh, current.profile)
            }
        }
        var output = DerivedTokenOutput(
            token: record.accessToken, tokenType: record.tokenType, audience: audience, resource: resource,
            scopes: record.scopes, expiresAt: record.expiresAt, profile: profile)
        let missing = scopes.filter { !record.scopes.contains($0) }
        if !missing.isEmpty {
            output.textMessages.append(
                "authctl: warning: Cognito did not grant \(missing.map { UntrustedText($0).description }.joined(separator: ", ")): it grants the scopes asked that the access token and the app client both have, and an access token from a sign-in through the API carries only \(ServiceRefusal.userAdminScope) unless the pool's pre-token-generation trigger adds scopes."
            )
        }
        return output
    }

    /// One GetDerivedToken, its refusals in words.
    private func exchange(
        _ request: DerivedTokenRequest, subject: String, app: AppClient, actor: String?, _ service: CognitoService
    ) throws -> DerivedTokenRecord {
        let answer: DerivedToken
        do {
            answer = try service.getDerivedToken(request, subjectToken: subject, client: app, actorToken: actor)
        } catch let error as CognitoError where !error.endsSession && error.refusal != .accessTokenExpired {
            throw Self.refusal(error, request: request, delegated: actor != nil) ?? error
        }
        let now = context.now()
        let claims = try? JWTClaims(token: answer.issuedToken)
        let granted = answer.scopes ?? claims?.string("scope").map { $0.split(separator: " ").map(String.init) } ?? []
        return DerivedTokenRecord(
            accessToken: answer.issuedToken,
            expiresAt: OutsideNumbers.expiry(ofAccessToken: answer.issuedToken, expiresIn: answer.expiresIn, now: now),
            scopes: granted, tokenType: answer.tokenType ?? "Bearer")
    }

    static func refusal(_ error: CognitoError, request: DerivedTokenRequest, delegated: Bool) -> AuthctlError? {
        let said = UntrustedText(error.message)
        let target: String
        switch request.target {
        case .audience(let name): target = "audience \(UntrustedText(name))"
        case .resource(let uri): target = "resource \(UntrustedText(uri))"
        }
        switch error.refusal {
        case .tokenExchangeNotAllowed?:
            let flow = delegated ? "ALLOW_TOKEN_EXCHANGE_DELEGATION" : "ALLOW_TOKEN_EXCHANGE_IMPERSONATION"
            return AuthctlError(
                .configuration,
                "this app client may not exchange tokens: an administrator adds \(flow) to its ExplicitAuthFlows (Cognito: \(said))"
            )
        case .resourceNotFound?:
            return AuthctlError(.configuration, "Cognito knows no \(target) for this app client (\(said))")
        case .invalidParameter?:
            return AuthctlError(.inputRejected, "Cognito refused the exchange for \(target): \(said)")
        default:
            return nil
        }
    }
}

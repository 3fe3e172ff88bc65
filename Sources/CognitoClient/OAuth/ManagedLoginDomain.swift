#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a browser sign-in sends to the managed login's authorize endpoint.
public struct AuthorizationRequest: Sendable {
    public var clientId: String
    /// Exactly as registered on the app client, e.g. `http://localhost:8400/callback`.
    public var redirectURI: String
    public var scopes: [String]
    public var state: String
    public var nonce: String
    public var pkce: PKCE
    /// `identity_provider`: skips the choice page (a SAML or OIDC provider's name, `Google`, `COGNITO`).
    public var identityProvider: String?
    /// `prompt`: `login` or `select_account`.
    public var prompt: String?

    /// Fresh random `state`, `nonce` and PKCE verifier.
    public init(
        clientId: String, redirectURI: String, scopes: [String], identityProvider: String? = nil, prompt: String? = nil
    ) {
        self.clientId = clientId
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.state = PKCE.randomToken()
        self.nonce = PKCE.randomToken()
        self.pkce = PKCE()
        self.identityProvider = identityProvider
        self.prompt = prompt
    }
}

/// The managed login's (hosted UI's) URLs for one domain, e.g.
/// `https://example.auth.eu-west-1.amazoncognito.com` or a custom domain.
public struct ManagedLoginDomain: Sendable, Equatable {
    /// Without a trailing slash.
    public let base: String

    public init(_ domain: String) {
        var base = domain
        while base.hasSuffix("/") { base.removeLast() }
        self.base = base
    }

    public var tokenURL: String { base + "/oauth2/token" }
    public var revokeURL: String { base + "/oauth2/revoke" }
    public var userInfoURL: String { base + "/oauth2/userInfo" }

    /// The URL a person opens. It carries no secret (only the verifier's hash), so it may be printed.
    public func authorizeURL(_ request: AuthorizationRequest) -> String {
        var fields: [(String, String)] = [
            ("response_type", "code"),
            ("client_id", request.clientId),
            ("redirect_uri", request.redirectURI),
            ("scope", request.scopes.joined(separator: " ")),
            ("state", request.state),
            ("nonce", request.nonce),
            ("code_challenge", request.pkce.challenge),
            ("code_challenge_method", PKCE.method),
        ]
        if let provider = request.identityProvider { fields.append(("identity_provider", provider)) }
        if let prompt = request.prompt { fields.append(("prompt", prompt)) }
        return base + "/oauth2/authorize?" + FormEncoding.encode(fields)
    }

    /// Ends the managed login's own session (its cookie), then sends the browser to `logoutURI`,
    /// which must be one of the app client's sign-out URLs.
    public func logoutURL(clientId: String, logoutURI: String) -> String {
        base + "/logout?" + FormEncoding.encode([("client_id", clientId), ("logout_uri", logoutURI)])
    }
}

/// The redirect back from the managed login: `?code=...&state=...` or `?error=...&error_description=...&state=...`.
public struct AuthorizationCallback: Sendable, Equatable {
    public var code: String?
    public var state: String?
    public var error: String?
    public var errorDescription: String?

    /// From the query string of the redirect (without `?`).
    public init(query: String) {
        let fields = FormEncoding.decode(query)
        code = fields["code"].flatMap { $0.isEmpty ? nil : $0 }
        state = fields["state"]
        error = fields["error"].flatMap { $0.isEmpty ? nil : $0 }
        errorDescription = fields["error_description"]
    }

    /// From a whole redirect URL a person pasted. Nil unless it is `redirectURI` (same scheme,
    /// host, port and path) with a query.
    public init?(pastedURL: String, redirectURI: String) {
        let trimmed = pastedURL.trimmed()
        guard let given = URLComponents(string: trimmed), let expected = URLComponents(string: redirectURI),
            given.scheme?.lowercased() == expected.scheme?.lowercased(),
            given.host?.lowercased() == expected.host?.lowercased(),
            given.port == expected.port, given.path == expected.path,
            let query = given.percentEncodedQuery, !query.isEmpty
        else { return nil }
        self.init(query: query)
    }

    /// Whether the redirect names this sign-in's `state` (compared in constant time).
    public func isForState(_ expectedState: String) -> Bool {
        guard let state, !state.isEmpty else { return false }
        return constantTimeEqual(state, expectedState)
    }

    /// The authorization code, once `state` is this sign-in's and no error came back.
    public func code(expectedState: String) throws -> String {
        // The state is checked first: an error redirect with another state is not this sign-in's.
        guard let state, !state.isEmpty, constantTimeEqual(state, expectedState) else {
            throw OAuthError(
                .stateMismatch,
                "the redirect's state is not this sign-in's (an old or forged redirect); nothing was signed in")
        }
        if let error {
            let description = SecretRedactor.redactTokens(errorDescription ?? "")
            throw OAuthError(
                OAuthError.code(forService: error), description.isEmpty ? error : description, serviceCode: error)
        }
        guard let code else {
            throw OAuthError(.unexpectedAnswer, "the redirect carried neither a code nor an error")
        }
        return code
    }
}

/// Equal strings, compared in time that does not depend on where they differ.
func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
}

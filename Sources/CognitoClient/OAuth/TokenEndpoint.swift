#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Tokens from the managed login's token endpoint (its JSON field names are snake_case).
public struct OAuthTokens: Decodable, Sendable, Equatable {
    public var accessToken: String
    public var idToken: String?
    public var refreshToken: String?
    public var expiresIn: Int?
    public var tokenType: String?
    /// Space-separated; the client_credentials answer carries none, the token's `scope` claim does.
    public var scope: String?

    enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case idToken = "id_token"
        case refreshToken = "refresh_token"
        case expiresIn = "expires_in"
        case tokenType = "token_type"
        case scope
    }

    /// The answer's tokens checked as they are read: shapes (`TokenShape`)
    /// and `expires_in` between 0 and a day (else absent: the token's `exp` counts).
    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        idToken = try container.decodeIfPresent(String.self, forKey: .idToken)
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
        expiresIn = OutsideNumbers.tokenLifetime(try? container.decodeIfPresent(Double.self, forKey: .expiresIn))
        tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType)
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
        if let problem = TokenShape.problem(accessToken: accessToken, idToken: idToken, refreshToken: refreshToken) {
            throw TokenShapeError(description: problem)
        }
    }

    public init(
        accessToken: String, idToken: String? = nil, refreshToken: String? = nil, expiresIn: Int? = nil,
        tokenType: String? = nil, scope: String? = nil
    ) {
        self.accessToken = accessToken
        self.idToken = idToken
        self.refreshToken = refreshToken
        self.expiresIn = expiresIn
        self.tokenType = tokenType
        self.scope = scope
    }

    /// When the access token stops working: the earlier of `expires_in` and its `exp`, and never
    /// more than a day from `now` (Cognito's longest lifetime), so no answer makes a cache keep it longer.
    public func expiry(now: Date) -> Date {
        OutsideNumbers.expiry(ofAccessToken: accessToken, expiresIn: expiresIn, now: now)
    }

    /// The same tokens in the shape a password sign-in gives, so both are stored alike.
    public var authenticationResult: AuthenticationResult {
        AuthenticationResult(
            accessToken: accessToken, expiresIn: expiresIn, tokenType: tokenType,
            refreshToken: refreshToken, idToken: idToken)
    }

    /// OpenID Connect's replay check: the id token names this sign-in's nonce and this client.
    public func checkIDToken(nonce: String, clientId: String) throws {
        guard let idToken else {
            throw OAuthError(
                .nonceMismatch,
                "the token endpoint returned no id token (is the openid scope allowed for the app client?)")
        }
        let claims: JWTClaims
        do {
            claims = try JWTClaims(token: idToken)
        } catch {
            throw OAuthError(.unexpectedAnswer, "the token endpoint returned an unreadable id token")
        }
        guard let got = claims.string("nonce"), constantTimeEqual(got, nonce) else {
            throw OAuthError(.nonceMismatch, "the id token does not carry this sign-in's nonce; nothing was signed in")
        }
        guard claims.audience == clientId else {
            throw OAuthError(
                .nonceMismatch,
                "the id token was issued to another app client (\(claims.audience ?? "none")), not \(clientId)")
        }
    }
}

/// The managed login's token and revoke endpoints (`/oauth2/token`, `/oauth2/revoke`), form-encoded
/// POSTs through the same transport as every Cognito call. An app client with a secret
/// authenticates with HTTP Basic; one without sends `client_id` in the body.
public final class TokenEndpoint {
    public let domain: ManagedLoginDomain
    public let transport: HTTPTransport
    public let client: AppClient
    public var retryPolicy: RetryPolicy

    public init(
        domain: ManagedLoginDomain, transport: HTTPTransport, client: AppClient, retryPolicy: RetryPolicy = .standard
    ) {
        self.domain = domain
        self.transport = transport
        self.client = client
        self.retryPolicy = retryPolicy
    }

    /// `grant_type=authorization_code`. Never repeated after it may have been sent: a code works once.
    public func exchange(code: String, redirectURI: String, verifier: String) throws -> OAuthTokens {
        try tokens(
            [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
                ("code_verifier", verifier),
            ],
            secrets: [code, verifier], idempotent: false)
    }

    /// `grant_type=refresh_token`: new access and id tokens (a refresh token only when the client rotates them).
    public func refresh(refreshToken: String) throws -> OAuthTokens {
        try tokens(
            [("grant_type", "refresh_token"), ("refresh_token", refreshToken)], secrets: [refreshToken],
            idempotent: true)
    }

    /// `grant_type=client_credentials` for machine-to-machine access tokens; no scope asks for
    /// every scope the client is allowed.
    public func clientCredentials(scopes: [String]) throws -> OAuthTokens {
        guard client.clientSecret != nil else {
            throw OAuthError(.invalidClient, "client_credentials needs the app client's secret")
        }
        var fields = [("grant_type", "client_credentials")]
        if !scopes.isEmpty { fields.append(("scope", scopes.joined(separator: " "))) }
        return try tokens(fields, secrets: [], idempotent: true)
    }

    /// `/oauth2/revoke`: the refresh token, and the access tokens issued with it, stop working.
    public func revoke(refreshToken: String) throws {
        _ = try post(domain.revokeURL, [("token", refreshToken)], secrets: [refreshToken], idempotent: true)
    }

    private func tokens(_ fields: [(String, String)], secrets: [String], idempotent: Bool) throws -> OAuthTokens {
        let response = try post(domain.tokenURL, fields, secrets: secrets, idempotent: idempotent)
        do {
            return try JSONDecoder().decode(OAuthTokens.self, from: response.body)
        } catch let error as TokenShapeError {
            throw OAuthError(
                .unexpectedAnswer, "the token endpoint answered with a token authctl refuses: \(error.description)",
                httpStatus: response.status)
        } catch {
            throw OAuthError(
                .unexpectedAnswer,
                "the token endpoint answered HTTP \(response.status) without tokens (\(Self.describe(response)))",
                httpStatus: response.status)
        }
    }

    /// Sends one form POST (with retries where they are safe); returns a 2xx answer or throws its error.
    private func post(_ url: String, _ fields: [(String, String)], secrets: [String], idempotent: Bool) throws
        -> HTTPResponse
    {
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json"),
        ]
        var body = fields
        var secretValues = secrets
        if let secret = client.clientSecret {
            // RFC 6749 2.3.1: id and secret form-encoded, joined by a colon, base64.
            let pair = FormEncoding.escape(client.clientId) + ":" + FormEncoding.escape(secret)
            let credentials = Data(pair.utf8).base64EncodedString()
            headers.append(("Authorization", "Basic " + credentials))
            secretValues += [secret, credentials]
        }
        body.append(("client_id", client.clientId))
        let request = HTTPRequest(url: url, headers: headers, body: Data(FormEncoding.encode(body).utf8))
        let redactor = SecretRedactor(secretValues: secretValues)

        var attempt = 0
        var outcomeUnknown = false
        while true {
            attempt += 1
            var failure: OAuthError
            var safeToRepeat: Bool
            do {
                let response = try transport.send(request)
                if (200..<300).contains(response.status) { return response }
                failure = Self.error(of: response, redactor: redactor)
                let serverFailed = response.status >= 500
                outcomeUnknown = outcomeUnknown || serverFailed || failure.code == .unexpectedAnswer
                safeToRepeat = response.status == 429 || (idempotent && serverFailed)
            } catch let error as TransportError {
                failure = OAuthError(.unreachable, redactor.redact(error.message), transportKind: error.kind)
                outcomeUnknown = outcomeUnknown || error.requestMayHaveBeenSent
                safeToRepeat =
                    (!error.requestMayHaveBeenSent && error.kind == .notConnected)
                    || (idempotent && (error.kind == .connection || error.kind == .timeout))
            }
            let cause = Self.retryCause(of: failure)
            guard safeToRepeat, attempt < retryPolicy.maxAttempts else {
                retryPolicy.report(
                    SafeName.operation(of: request), attempt: attempt, cause: cause,
                    safeToRepeat ? .attemptsUsed : .notRetryable)
                failure.outcomeUnknown = outcomeUnknown
                throw failure
            }
            let wait = retryPolicy.delay(afterAttempt: attempt)
            retryPolicy.report(SafeName.operation(of: request), attempt: attempt, cause: cause, .retrying, wait: wait)
            retryPolicy.sleep(wait)
        }
    }

    /// Why a form POST failed, in the retry's terms.
    static func retryCause(of failure: OAuthError) -> RetryDecision.Cause {
        switch failure.transportKind {
        case .notConnected?: return .notConnected
        case .connection?: return .connection
        case .timeout?: return .timeout
        default:
            if failure.httpStatus == 429 { return .throttled }
            return (failure.httpStatus ?? 0) >= 500 ? .serverError : .refused
        }
    }

    /// A non-2xx answer: `{"error": "...", "error_description": "..."}` as Cognito's endpoints
    /// send it, else an unexpected answer (an HTML error page from a proxy or a wrong domain).
    static func error(of response: HTTPResponse, redactor: SecretRedactor) -> OAuthError {
        let object = JSONValue.document(response.body)
        if let raw = object?["error"]?.string, !raw.isEmpty {
            let description = object?["error_description"]?.string.map(redactor.redact) ?? ""
            return OAuthError(
                OAuthError.code(forService: raw), description.isEmpty ? raw : description,
                serviceCode: raw, httpStatus: response.status)
        }
        if response.status == 429 {
            return OAuthError(.throttled, "too many requests (HTTP 429)", httpStatus: 429)
        }
        let code: OAuthError.Code = response.status >= 500 ? .serverError : .unexpectedAnswer
        return OAuthError(code, "HTTP \(response.status) with \(describe(response))", httpStatus: response.status)
    }

    static func describe(_ response: HTTPResponse) -> String {
        let contentType = response.headers["content-type"].map { " (\($0))" } ?? ""
        if response.body.isEmpty { return "an empty body" }
        if JSONValue.document(response.body) == nil { return "a body that is not JSON\(contentType)" }
        return "JSON that is not the token endpoint's\(contentType)"
    }
}

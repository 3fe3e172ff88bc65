import CognitoClient
import Foundation

/// The parsers of outside data, one entry per fuzz target (CognitoClient's here, LocalFormats' in
/// `LocalFormatTargets`). Each takes the raw bytes libFuzzer (or a
/// replayed corpus file) gives and must never crash, whatever they are.
enum FuzzTargets {
    static let all: [String: @Sendable (Data) -> Void] = LocalFormatTargets.all.merging(AgentProtocolTargets.all) {
        local, _ in
        local
    }
    .merging(StateFormatTargets.all) { local, _ in local }
    .merging(DBusMessageTargets.all) { local, _ in local }
    .merging(EndpointRequestTargets.all) { local, _ in local }
    .merging([
        "http-headers": httpHeaders,
        "service-answer": serviceAnswer,
        "oauth-answer": oauthAnswer,
        "oauth-redirect": oauthRedirect,
        "identity-answer": identityAnswer,
        "jwt": jwt,
        "jwks": jwks,
        "retry-after": retryAfter,
        "webauthn": webAuthn,
    ]) { local, _ in local }

    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let noWait = RetryPolicy(maxAttempts: 2, sleep: { _ in })

    /// A response's header section as a server sends it (`HTTP/1.1 400 …\r\nname: value\r\n…`),
    /// line by line through the transport's `ResponseHeaders`, then its `Retry-After` and error
    /// type as the service reads them (a 400 without a body: the error type comes from the header).
    static func httpHeaders(_ data: Data) {
        let (status, headers) = head(data)
        _ = RetryAfter.seconds(headers["retry-after"], now: now)
        let service = CognitoService(
            endpoint: "https://cognito-idp.eu-west-1.amazonaws.com/",
            transport: Replay(HTTPResponse(status: status ?? 400, headers: headers)),
            retryPolicy: noWait)
        _ = try? service.getUser(accessToken: "fuzz-access-token")
    }

    /// A whole answer of a user pool, `HEAD\r\n\r\nBODY`, through CognitoService: error parsing,
    /// redaction, `Retry-After`, GetUser decoding, the JWKS fetch and its `Cache-Control`.
    static func serviceAnswer(_ data: Data) {
        let service = CognitoService(
            endpoint: "https://cognito-idp.eu-west-1.amazonaws.com/",
            transport: Replay(response(data)), retryPolicy: noWait)
        _ = try? service.getUser(accessToken: "fuzz-access-token")
        _ = try? service.fetchJWKS(userPoolId: "eu-west-1_Fuzz")
    }

    /// An answer of the managed login's token endpoint (`/oauth2/token`, `/oauth2/revoke`), with
    /// the id token's nonce check on what it returns.
    static func oauthAnswer(_ data: Data) {
        let endpoint = TokenEndpoint(
            domain: ManagedLoginDomain("https://fuzz.auth.eu-west-1.amazoncognito.com"),
            transport: Replay(response(data)),
            client: AppClient(userPoolId: "eu-west-1_Fuzz", clientId: "client", clientSecret: "secret"),
            retryPolicy: noWait)
        if let tokens = try? endpoint.refresh(refreshToken: "fuzz-refresh-token") {
            _ = try? tokens.checkIDToken(nonce: "nonce", clientId: "client")
            _ = tokens.authenticationResult
        }
        _ = try? endpoint.clientCredentials(scopes: ["fuzz/read"])
        _ = try? endpoint.revoke(refreshToken: "fuzz-refresh-token")
    }

    /// The redirect back from the managed login, as a pasted URL and as the query the local
    /// listener reads.
    static func oauthRedirect(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        if let pasted = AuthorizationCallback(pastedURL: text, redirectURI: "http://localhost:8400/callback") {
            _ = try? pasted.code(expectedState: "state")
        }
        _ = try? AuthorizationCallback(query: text).code(expectedState: "state")
    }

    /// An answer of an identity pool (GetId, then GetCredentialsForIdentity).
    static func identityAnswer(_ data: Data) {
        let service = CognitoIdentityService(
            endpoint: "https://cognito-identity.eu-west-1.amazonaws.com/",
            transport: Replay(response(data)), retryPolicy: noWait)
        let logins = [CognitoIdentityService.providerName(userPoolId: "eu-west-1_Fuzz"): "fuzz-id-token"]
        _ = try? service.getId(identityPoolId: "eu-west-1:00000000-0000-0000-0000-000000000000", logins: logins)
        if let identity = try? service.getCredentialsForIdentity(identityId: "eu-west-1:fuzz", logins: logins) {
            _ = identity.credentials.expiration.timeIntervalSince(now)
        }
    }

    /// Passkey options as the service sends them (WEB_AUTHN's CREDENTIAL_REQUEST_OPTIONS text, the
    /// CredentialCreationOptions document) and the WebAuthn operations' answers (`HEAD\r\n\r\nBODY`).
    static func webAuthn(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        if let request = WebAuthnRequestOptions.from(json: text) {
            _ = request.allowCredentials?.map(\.rawId)
            _ = WebAuthnClientData(.get, challenge: request.challenge, rpId: request.rpId ?? "").hash
        }
        if let document = try? JSONDecoder().decode(JSONValue.self, from: data),
            let creation = WebAuthnCreationOptions.from(document)
        {
            _ = (creation.algorithm(among: WebAuthnAlgorithm.supported), creation.wantsResidentKey)
            _ = creation.excludeCredentials?.map(\.rawId)
        }
        let service = CognitoService(
            endpoint: "https://cognito-idp.eu-west-1.amazonaws.com/",
            transport: Replay(response(data)), retryPolicy: noWait)
        _ = try? service.startWebAuthnRegistration(accessToken: "fuzz-access-token")
        _ = try? service.listWebAuthnCredentials(accessToken: "fuzz-access-token")
    }

    /// A compact JWT: claims decoding and the offline checks, then the signature check.
    static func jwt(_ data: Data) {
        let token = String(decoding: data, as: UTF8.self)
        let expected = TokenExpectations(
            region: "eu-west-1", userPoolId: "eu-west-1_Fuzz", use: .access, clientId: "client")
        if let claims = try? JWTClaims(token: token) {
            _ = (claims.username, claims.expiresAt, claims.notBefore, claims.groups, claims.issuedAt)
        }
        _ = try? JWTVerifier.checkClaims(token, expected, now: now)
        _ = try? JWTVerifier.checkSignature(token, keys: fixedKeys)
    }

    /// A key set document, then a signature check against it.
    static func jwks(_ data: Data) {
        guard let keys = try? JWKS(json: data) else { return }
        _ = try? JWTVerifier.checkSignature(fixedToken, keys: keys)
    }

    /// A `Retry-After` value: seconds or any of the three HTTP-date forms.
    static func retryAfter(_ data: Data) {
        _ = RetryAfter.seconds(String(decoding: data, as: UTF8.self), now: now)
    }

    // MARK: - Answers from bytes

    /// `HEAD\r\n\r\nBODY` (or with bare `\n`): the head through `head(_:)`, the rest as the body.
    static func response(_ data: Data) -> HTTPResponse {
        let bytes = [UInt8](data)
        var split = bytes.count
        for index in bytes.indices where bytes[index] == 0x0A {
            let next = index + 1 < bytes.count ? bytes[index + 1] : 0
            let afterCR = index + 2 < bytes.count ? bytes[index + 2] : 0
            if next == 0x0A {
                split = index + 2
                break
            }
            if next == 0x0D && afterCR == 0x0A {
                split = index + 3
                break
            }
        }
        let (status, headers) = head(Data(bytes[..<split]))
        return HTTPResponse(status: status ?? 200, headers: headers, body: Data(bytes[split...]))
    }

    /// Each line, terminator included, as libcurl's header callback hands it to the transport; the
    /// status is the code of the last status line (libcurl's `CURLINFO_RESPONSE_CODE`).
    static func head(_ data: Data) -> (status: Int?, headers: [String: String]) {
        var parsed = ResponseHeaders()
        var status: Int?
        var start = data.startIndex
        while start < data.endIndex {
            let end = data[start...].firstIndex(of: 0x0A).map { $0 + 1 } ?? data.endIndex
            let line = data[start..<end]
            guard line.withUnsafeBytes({ parsed.add(line: $0) }) else { break }
            if line.starts(with: Array("HTTP/".utf8)) {
                let words = String(decoding: line, as: UTF8.self).split(separator: " ")
                status = words.count > 1 ? Int(words[1].prefix(3)) : nil
            }
            start = end
        }
        return (status, parsed.fields)
    }

    /// A 2048-bit-sized key (modulus of 0x80 then zeros is no real key: the check fails, safely).
    static let fixedKeys = try! JWKS(
        json: Data(
            #"{"keys":[{"kid":"k1","kty":"RSA","alg":"RS256","use":"sig","n":"gA\#(String(repeating: "A", count: 340))","e":"AQAB"}]}"#
                .utf8))
    static let fixedToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ4In0." + String(repeating: "A", count: 342)

    final class Replay: HTTPTransport {
        let response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
        func send(_ request: HTTPRequest) throws -> HTTPResponse { response }
    }
}

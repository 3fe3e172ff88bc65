import CognitoClient
import Foundation
import XCTest

final class OAuthTests: XCTestCase {
    private let domain = ManagedLoginDomain("https://example.auth.eu-west-1.amazoncognito.com/")

    func testS256ChallengeIsBase64URLOfSHA256() {
        // Expected value from Python: base64.urlsafe_b64encode(hashlib.sha256(verifier).digest()).rstrip(b"=")
        let pkce = PKCE(verifier: "dBjftJeZ4CVP-mJ92K9zHmqFD6lNNHJH5q7RZ4LzeRk")
        XCTAssertEqual(pkce.challenge, "9QxnlprZBQILjSXU3wJ1aa_qlM2uxt1PssrSV9uzSTU")
    }

    func testRandomVerifiersAreLongEnoughAndDiffer() {
        let a = PKCE()
        let b = PKCE()
        XCTAssertNotEqual(a.verifier, b.verifier)
        XCTAssertTrue((43...128).contains(a.verifier.count))
        XCTAssertNil(
            a.verifier.rangeOfCharacter(
                from: CharacterSet(
                    charactersIn:
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
                ).inverted))
        XCTAssertNotEqual(PKCE.randomToken(), PKCE.randomToken())
    }

    func testAuthorizeURLCarriesTheRequestButNoVerifier() throws {
        let request = AuthorizationRequest(
            clientId: "abc", redirectURI: "http://localhost:8400/callback",
            scopes: ["openid", "email"], identityProvider: "Okta SAML", prompt: "login")
        let url = domain.authorizeURL(request)
        XCTAssertTrue(url.hasPrefix("https://example.auth.eu-west-1.amazoncognito.com/oauth2/authorize?"))
        let items = Dictionary(
            uniqueKeysWithValues: try XCTUnwrap(URLComponents(string: url)?.queryItems).map {
                ($0.name, $0.value ?? "")
            })
        XCTAssertEqual(items["response_type"], "code")
        XCTAssertEqual(items["redirect_uri"], "http://localhost:8400/callback")
        XCTAssertEqual(items["scope"], "openid email")
        XCTAssertEqual(items["code_challenge"], request.pkce.challenge)
        XCTAssertEqual(items["code_challenge_method"], "S256")
        XCTAssertEqual(items["state"], request.state)
        XCTAssertEqual(items["nonce"], request.nonce)
        XCTAssertEqual(items["identity_provider"], "Okta SAML")
        XCTAssertEqual(items["prompt"], "login")
        XCTAssertFalse(url.contains(request.pkce.verifier))
        XCTAssertEqual(
            domain.logoutURL(clientId: "abc", logoutURI: "http://localhost:8400/signed-out"),
            "https://example.auth.eu-west-1.amazoncognito.com/logout?client_id=abc&logout_uri=http%3A%2F%2Flocalhost%3A8400%2Fsigned-out"
        )
    }

    func testCallbackChecksStateBeforeAnything() throws {
        XCTAssertEqual(try AuthorizationCallback(query: "code=c0de&state=s1").code(expectedState: "s1"), "c0de")
        XCTAssertThrowsError(try AuthorizationCallback(query: "code=c0de&state=other").code(expectedState: "s1")) {
            XCTAssertEqual(($0 as? OAuthError)?.code, .stateMismatch)
        }
        XCTAssertThrowsError(try AuthorizationCallback(query: "code=c0de").code(expectedState: "s1")) {
            XCTAssertEqual(($0 as? OAuthError)?.code, .stateMismatch)
        }
        XCTAssertThrowsError(
            try AuthorizationCallback(query: "error=access_denied&error_description=User+said+no&state=s1")
                .code(expectedState: "s1")
        ) {
            let error = $0 as? OAuthError
            XCTAssertEqual(error?.code, .accessDenied)
            XCTAssertEqual(error?.message, "User said no")
            XCTAssertTrue(error?.isGrantRefused ?? false)
        }
    }

    func testPastedURLMustBeTheRedirectURI() throws {
        let redirect = "http://localhost:8400/callback"
        let pasted = try XCTUnwrap(
            AuthorizationCallback(
                pastedURL: "  http://localhost:8400/callback?code=x%2By&state=s \n", redirectURI: redirect))
        XCTAssertEqual(pasted.code, "x+y")
        XCTAssertNil(
            AuthorizationCallback(pastedURL: "http://localhost:8401/callback?code=x&state=s", redirectURI: redirect))
        XCTAssertNil(
            AuthorizationCallback(pastedURL: "http://evil.example/callback?code=x&state=s", redirectURI: redirect))
        XCTAssertNil(AuthorizationCallback(pastedURL: "http://localhost:8400/callback", redirectURI: redirect))
    }

    private func endpoint(_ steps: [ScriptedTransport.Step], secret: String? = "s3cret") -> (
        TokenEndpoint, ScriptedTransport
    ) {
        let transport = ScriptedTransport(steps)
        let policy = RetryPolicy(maxAttempts: 3, sleep: { _ in }, random: { 0 })
        return (
            TokenEndpoint(
                domain: domain, transport: transport,
                client: AppClient(userPoolId: "eu-west-1_x", clientId: "client1", clientSecret: secret),
                retryPolicy: policy), transport
        )
    }

    private static let access = TestJWT.make(["token_use": "access"])
    private static let id = TestJWT.make(["token_use": "id"])

    /// A token with a newline made `token` print two lines, control bytes
    /// reached `exec`'s environment, and `expires_in` was taken at any size. Refused or bounded
    /// where the answer is read.
    func testMisshapenTokensAreRefusedAndLifetimesBounded() throws {
        for bad: [String: Any] in [
            ["access_token": Self.access + "\nX"], ["access_token": "opaque"],
            ["access_token": Self.access, "id_token": "a.b"],
            ["access_token": Self.access, "refresh_token": "r\u{1b}[2J"],
            ["access_token": "a..c"],
        ] {
            let (endpoint, _) = endpoint([Self.answer(bad)])
            XCTAssertThrowsError(try endpoint.refresh(refreshToken: "r"), "\(bad)") {
                XCTAssertEqual(($0 as? OAuthError)?.code, .unexpectedAnswer)
            }
        }
        for huge: Any in [9_000_000_000_000_000_000 as Int64, 1e300, -5, 90_000] {
            let (endpoint, _) = endpoint([Self.answer(["access_token": Self.access, "expires_in": huge])])
            let tokens = try endpoint.clientCredentials(scopes: [])
            XCTAssertNil(tokens.expiresIn, "\(huge)")
        }
    }

    /// A machine token's expiry: the earlier of `expires_in` and `exp`, never more than a day.
    func testATokensExpiryIsBoundedByADay() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        XCTAssertEqual(OAuthTokens(accessToken: Self.access).expiry(now: now), now.addingTimeInterval(3600))
        XCTAssertEqual(
            OAuthTokens(accessToken: Self.access, expiresIn: 600).expiry(now: now), now.addingTimeInterval(600))
        let forever = OAuthTokens(accessToken: TestJWT.make(["exp": 250_000_000_000.0]))
        XCTAssertEqual(forever.expiry(now: now), now.addingTimeInterval(86_400), "never more than a day")
    }

    private static func answer(_ fields: [String: Any], status: Int = 200, contentType: String = "application/json")
        -> ScriptedTransport.Step
    {
        .respond(
            HTTPResponse(
                status: status, headers: ["content-type": contentType],
                body: (try? JSONSerialization.data(withJSONObject: fields)) ?? Data()))
    }

    func testCodeExchangeIsAFormPostWithBasicAuth() throws {
        let (endpoint, transport) = endpoint([
            Self.answer([
                "access_token": Self.access, "id_token": Self.id, "refresh_token": "r",
                "expires_in": 3600, "token_type": "Bearer",
            ])
        ])
        let tokens = try endpoint.exchange(
            code: "the code", redirectURI: "http://localhost:8400/callback", verifier: "v")
        XCTAssertEqual(
            tokens,
            OAuthTokens(
                accessToken: Self.access, idToken: Self.id, refreshToken: "r", expiresIn: 3600, tokenType: "Bearer"))
        let request = transport.requests[0]
        XCTAssertEqual(request.url, "https://example.auth.eu-west-1.amazoncognito.com/oauth2/token")
        XCTAssertEqual(request.headers.first { $0.name == "Content-Type" }?.value, "application/x-www-form-urlencoded")
        XCTAssertEqual(
            request.headers.first { $0.name == "Authorization" }?.value,
            "Basic " + Data("client1:s3cret".utf8).base64EncodedString())
        XCTAssertEqual(
            String(decoding: request.body, as: UTF8.self),
            "grant_type=authorization_code&code=the%20code&redirect_uri=http%3A%2F%2Flocalhost%3A8400%2Fcallback&code_verifier=v&client_id=client1"
        )
    }

    func testPublicClientSendsNoAuthorization() throws {
        let (endpoint, transport) = endpoint([Self.answer(["access_token": Self.access])], secret: nil)
        _ = try endpoint.refresh(refreshToken: "r")
        XCTAssertNil(transport.requests[0].headers.first { $0.name == "Authorization" })
        XCTAssertTrue(String(decoding: transport.requests[0].body, as: UTF8.self).hasSuffix("&client_id=client1"))
    }

    func testServiceErrorsAreTypedAndRedacted() {
        let cases: [(String, OAuthError.Code)] = [
            ("invalid_grant", .invalidGrant), ("invalid_client", .invalidClient),
            ("unauthorized_client", .unauthorizedClient), ("invalid_scope", .invalidScope),
            ("something_new", .otherServiceError),
        ]
        for (raw, code) in cases {
            let (endpoint, _) = endpoint([
                Self.answer(["error": raw, "error_description": "bad the code"], status: 400)
            ])
            XCTAssertThrowsError(try endpoint.exchange(code: "the code", redirectURI: "r", verifier: "v")) {
                let error = $0 as? OAuthError
                XCTAssertEqual(error?.code, code)
                XCTAssertEqual(error?.serviceCode, raw)
                XCTAssertEqual(error?.message, "bad [redacted]")
            }
        }
    }

    /// An endpoint (a proxy's error page, a debugging server) that echoes the
    /// request showed the client secret base64-encoded in the `Authorization: Basic` header, or
    /// percent- or JSON-escaped: every encoding authctl sends is redacted, not only the raw secret.
    func testTheSecretIsRedactedInEveryEncodingItWasSent() throws {
        let secret = "s3cret/with spaces+and\"quotes\""
        let basic = Data("client1:\(percentEncoded(secret))".utf8).base64EncodedString()
        let echoes = [
            "Authorization: Basic \(basic)", "client_secret=\(percentEncoded(secret))",
            "client_secret=" + percentEncoded(secret).replacingOccurrences(of: "%20", with: "+"),
            #"{"secret": "s3cret\/with spaces+and\"quotes\""}"#,
            "raw \(Data(secret.utf8).base64EncodedString())",
        ]
        for echo in echoes {
            let (endpoint, _) = endpoint(
                [Self.answer(["error": "invalid_request", "error_description": echo], status: 400)],
                secret: secret)
            XCTAssertThrowsError(try endpoint.refresh(refreshToken: "refresh-token-0001")) {
                let message = ($0 as? OAuthError)?.message ?? ""
                XCTAssertTrue(message.contains("[redacted]"), message)
                XCTAssertFalse(
                    message.contains(basic) || message.contains("s3cret") || message.contains("czNjcmV0"), message)
            }
        }
    }

    private func percentEncoded(_ value: String) -> String {
        value.addingPercentEncoding(
            withAllowedCharacters: CharacterSet(
                charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))!
    }

    func testHTMLPageIsAnUnexpectedAnswer() {
        let page = ScriptedTransport.Step.respond(
            HTTPResponse(status: 404, headers: ["content-type": "text/html"], body: Data("<html>".utf8)))
        let (endpoint, _) = endpoint([page])
        XCTAssertThrowsError(try endpoint.clientCredentials(scopes: [])) {
            XCTAssertEqual(($0 as? OAuthError)?.code, .unexpectedAnswer)
            XCTAssertTrue(($0 as? OAuthError)?.isServiceFailure ?? false)
        }
    }

    func testOnlyIdempotentGrantsAreRepeatedAfterA5xx() throws {
        let failure = Self.answer(["error": "server_error"], status: 500)
        let (exchange, sent) = endpoint([failure, Self.answer(["access_token": Self.access])])
        XCTAssertThrowsError(try exchange.exchange(code: "c", redirectURI: "r", verifier: "v")) {
            XCTAssertTrue(($0 as? OAuthError)?.outcomeUnknown ?? false)
        }
        XCTAssertEqual(sent.requests.count, 1, "a code works once: never sent twice")
        let (machine, sentAgain) = endpoint([failure, Self.answer(["access_token": Self.access, "expires_in": 3600])])
        XCTAssertEqual(try machine.clientCredentials(scopes: ["orders/read"]).accessToken, Self.access)
        XCTAssertEqual(sentAgain.requests.count, 2)
        XCTAssertTrue(String(decoding: sentAgain.requests[1].body, as: UTF8.self).contains("scope=orders%2Fread"))
    }

    func testClientCredentialsNeedsASecret() {
        let (endpoint, transport) = endpoint([], secret: nil)
        XCTAssertThrowsError(try endpoint.clientCredentials(scopes: [])) {
            XCTAssertEqual(($0 as? OAuthError)?.code, .invalidClient)
        }
        XCTAssertTrue(transport.requests.isEmpty)
    }

    func testIDTokenMustCarryTheNonceAndClient() throws {
        let good = OAuthTokens(accessToken: "a", idToken: TestJWT.make(["nonce": "n1", "aud": "client1"]))
        XCTAssertNoThrow(try good.checkIDToken(nonce: "n1", clientId: "client1"))
        XCTAssertThrowsError(try good.checkIDToken(nonce: "n2", clientId: "client1")) {
            XCTAssertEqual(($0 as? OAuthError)?.code, .nonceMismatch)
        }
        XCTAssertThrowsError(try good.checkIDToken(nonce: "n1", clientId: "other"))
        XCTAssertThrowsError(try OAuthTokens(accessToken: "a").checkIDToken(nonce: "n1", clientId: "client1"))
    }
}

import CognitoClient
import Foundation

/// The parsers of outside data in CognitoClient, one entry per fuzz target. Each takes the raw
/// bytes libFuzzer (or a replayed corpus file) gives and must never crash, whatever they are.
enum FuzzTargets {
    static let all: [String: (Data) -> Void] = [
        "service-answer": serviceAnswer,
        "jwt": jwt,
        "jwks": jwks,
        "retry-after": retryAfter,
    ]

    /// A whole answer of the service: `STATUS\nheader: value\n...\n\nBODY`, through CognitoService
    /// (error parsing, redaction, Retry-After, response decoding).
    static func serviceAnswer(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let (head, body) = text.range(of: "\n\n").map { (String(text[..<$0.lowerBound]), String(text[$0.upperBound...])) }
            ?? (text, "")
        var lines = head.split(separator: "\n", omittingEmptySubsequences: false)
        let status = lines.isEmpty ? 200 : Int(lines.removeFirst().prefix(4)) ?? 200
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let response = HTTPResponse(status: status, headers: headers, body: Data(body.utf8))
        let service = CognitoService(endpoint: "https://cognito-idp.eu-west-1.amazonaws.com/",
                                     transport: Replay(response), retryPolicy: RetryPolicy(maxAttempts: 2, sleep: { _ in }))
        _ = try? service.getUser(accessToken: "fuzz-access-token")
        _ = try? service.fetchJWKS(userPoolId: "eu-west-1_Fuzz")
    }

    /// A compact JWT: claims decoding and the offline checks, then the signature check.
    static func jwt(_ data: Data) {
        let token = String(decoding: data, as: UTF8.self)
        let expected = TokenExpectations(region: "eu-west-1", userPoolId: "eu-west-1_Fuzz", use: .access, clientId: "client")
        if let claims = try? JWTClaims(token: token) {
            _ = (claims.username, claims.expiresAt, claims.notBefore, claims.groups, claims.issuedAt)
        }
        _ = try? JWTVerifier.checkClaims(token, expected, now: Date(timeIntervalSince1970: 1_800_000_000))
        _ = try? JWTVerifier.checkSignature(token, keys: fixedKeys)
    }

    /// A key set document, then a signature check against it.
    static func jwks(_ data: Data) {
        guard let keys = try? JWKS(json: data) else { return }
        _ = try? JWTVerifier.checkSignature(fixedToken, keys: keys)
    }

    static func retryAfter(_ data: Data) {
        _ = RetryAfter.seconds(String(decoding: data, as: UTF8.self), now: Date(timeIntervalSince1970: 1_800_000_000))
    }

    /// A 2048-bit-sized key (modulus of 0x80 then zeros is no real key: the check fails, safely).
    static let fixedKeys = try! JWKS(json: Data(#"{"keys":[{"kid":"k1","kty":"RSA","alg":"RS256","use":"sig","n":"gA\#(String(repeating: "A", count: 340))","e":"AQAB"}]}"#.utf8))
    static let fixedToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ4In0." + String(repeating: "A", count: 342)

    final class Replay: HTTPTransport {
        let response: HTTPResponse
        init(_ response: HTTPResponse) { self.response = response }
        func send(_ request: HTTPRequest) throws -> HTTPResponse { response }
    }
}

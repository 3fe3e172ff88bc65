import Crypto
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a Cognito token must say to be used: the pool's issuer, the right `token_use`,
/// the configured client, and an `exp` in the future.
public struct TokenExpectations: Sendable {
    public enum Use: String, Sendable { case access, id }

    /// The original issuer, in the pool's region.
    public var issuer: String
    /// Every issuer accepted: the original and the updated one (`CognitoIssuer.accepted`).
    public var acceptedIssuers: [String]
    public var use: Use
    public var clientId: String

    public init(region: String, userPoolId: String, use: Use, clientId: String) {
        self.issuer = CognitoIssuer.original(region: region, userPoolId: userPoolId)
        self.acceptedIssuers = CognitoIssuer.accepted(region: region, userPoolId: userPoolId)
        self.use = use
        self.clientId = clientId
    }
}

/// The two issuers a pool's tokens may name: the original, `https://cognito-idp.<pool
/// region>.amazonaws.com/<pool id>`, and the updated one (the pool's issuer configuration
/// `UPDATED`, needed for multi-Region replication), `https://issuer-cognito-idp.<primary
/// region>.amazonaws.com/<pool id>`, where the primary region is the pool id's prefix. Each
/// publishes the pool's keys at `<issuer>/.well-known/jwks.json`. Nothing else is accepted.
public enum CognitoIssuer {
    public static func original(region: String, userPoolId: String) -> String {
        "https://cognito-idp.\(region).amazonaws.com/\(userPoolId)"
    }

    /// Nil for a pool id without a region prefix.
    public static func updated(userPoolId: String) -> String? {
        guard let underscore = userPoolId.firstIndex(of: "_"), underscore != userPoolId.startIndex else { return nil }
        return "https://issuer-cognito-idp.\(userPoolId[..<underscore]).amazonaws.com/\(userPoolId)"
    }

    public static func accepted(region: String, userPoolId: String) -> [String] {
        [original(region: region, userPoolId: userPoolId)] + (updated(userPoolId: userPoolId).map { [$0] } ?? [])
    }

    /// Where `issuer` publishes its keys.
    public static func jwksURL(issuer: String) -> String {
        issuer + "/.well-known/jwks.json"
    }
}

/// A JSON Web Key Set as Cognito publishes it at `<pool issuer>/.well-known/jwks.json`.
public struct JWKS: Codable, Sendable {
    public struct Key: Codable, Sendable {
        public var kid: String
        public var kty: String
        public var alg: String?
        public var n: String?
        public var e: String?
        public var use: String?
    }

    public var keys: [Key]

    public init(keys: [Key]) { self.keys = keys }

    public init(json: Data) throws {
        do {
            self = try JSONDecoder().decode(JWKS.self, from: json)
        } catch {
            throw JWTError.malformed("the JWKS document is not a JSON key set")
        }
    }
}

/// Offline checks of Cognito JWTs: claims always, the RS256 signature when a key set is given.
public enum JWTVerifier {
    /// Checks `iss`, `token_use`, `client_id` (access) or `aud` (id), and `exp` (with `leeway` seconds).
    public static func checkClaims(_ token: String, _ expected: TokenExpectations, now: Date, leeway: Double = 0) throws
        -> JWTClaims
    {
        let claims = try JWTClaims(token: token)
        guard let issuer = claims.issuer, expected.acceptedIssuers.contains(issuer) else {
            throw JWTError(
                .claimMismatch,
                message:
                    "the token's issuer is \(claims.issuer ?? "missing"), expected \(expected.acceptedIssuers.joined(separator: " or "))"
            )
        }
        guard claims.tokenUse == expected.use.rawValue else {
            throw JWTError(
                .claimMismatch,
                message: "the token is an \(claims.tokenUse ?? "unknown") token, expected \(expected.use.rawValue)")
        }
        let client = expected.use == .access ? claims.clientId : claims.audience
        guard client == expected.clientId else {
            throw JWTError(
                .claimMismatch,
                message: "the token was issued to client \(client ?? "missing"), expected \(expected.clientId)")
        }
        guard let expiry = claims.expiresAt else {
            throw JWTError(.claimMismatch, message: "the token has no expiry (exp)")
        }
        guard expiry.timeIntervalSince(now) > -leeway else {
            throw JWTError(.expired, message: "the token expired at \(expiry.formatted(.iso8601))")
        }
        if claims.raw["nbf"] != nil {
            guard let notBefore = claims.notBefore else {
                throw JWTError(.claimMismatch, message: "the token's nbf is not a number")
            }
            guard notBefore.timeIntervalSince(now) <= leeway else {
                throw JWTError(.notYetValid, message: "the token is not valid before \(notBefore.formatted(.iso8601))")
            }
        }
        return claims
    }

    /// RSA keys shorter than this are refused (NIST SP 800-131A; Cognito's are 2048-bit).
    public static let minimumRSABits = 2048

    /// Significant bits of a big-endian unsigned integer.
    static func bitCount(_ bigEndian: Data) -> Int {
        guard let first = bigEndian.firstIndex(where: { $0 != 0 }) else { return 0 }
        let leading = bigEndian[first]
        return (bigEndian.endIndex - first - 1) * 8 + (8 - leading.leadingZeroBitCount)
    }

    /// Checks the RS256 signature against the key named by the header's `kid`. A `kid` the set
    /// does not hold throws with code `.unknownKey` (the pool may have rotated its keys).
    public static func checkSignature(_ token: String, keys: JWKS) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw JWTError.malformed("a JWT has three parts") }
        guard let headerData = Base64URL.decode(String(parts[0])),
            let header = try? JSONDecoder().decode([String: JSONValue].self, from: headerData)
        else {
            throw JWTError.malformed("the JWT header is not base64url JSON")
        }
        guard case .string("RS256")? = header["alg"] else {
            throw JWTError(
                .unsupportedAlgorithm, message: "the token's algorithm is not RS256 (Cognito signs with RS256 only)")
        }
        guard case .string(let kid)? = header["kid"] else {
            throw JWTError(.unsupportedAlgorithm, message: "the token names no signing key (kid)")
        }
        guard let key = keys.keys.first(where: { $0.kid == kid }) else {
            throw JWTError(.unknownKey, message: "the pool's key set has no key \(kid)")
        }
        guard key.kty == "RSA", let n = key.n.flatMap(Base64URL.decode), let e = key.e.flatMap(Base64URL.decode) else {
            throw JWTError(.unusableKey, message: "key \(kid) is not an RSA public key")
        }
        // RFC 7517: `use` and `alg` are optional, but when a key says what it is for, it must be
        // signing with RS256; a key published for encryption or another algorithm is not used.
        if let use = key.use, use != "sig" {
            throw JWTError(.unusableKey, message: "key \(kid) is published for \"\(use)\", not for signatures")
        }
        if let alg = key.alg, alg != "RS256" {
            throw JWTError(.unusableKey, message: "key \(kid) is published for \(alg), not RS256")
        }
        let modulusBits = Self.bitCount(n)
        guard modulusBits >= minimumRSABits else {
            throw JWTError(
                .unusableKey,
                message: "key \(kid) is a \(modulusBits)-bit RSA key; at least \(minimumRSABits) bits are required")
        }
        guard let signature = Base64URL.decode(String(parts[2])) else {
            throw JWTError.malformed("the JWT signature is not base64url")
        }
        let publicKey: _RSA.Signing.PublicKey
        do {
            publicKey = try _RSA.Signing.PublicKey(n: n, e: e)
        } catch {
            throw JWTError(.unusableKey, message: "key \(kid) cannot be used: \(error)")
        }
        let signedPart = Data("\(parts[0]).\(parts[1])".utf8)
        let valid = publicKey.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature),
            for: SHA256.hash(data: signedPart), padding: .insecurePKCS1v1_5)
        guard valid else {
            throw JWTError(.badSignature, message: "the token's signature does not verify with key \(kid)")
        }
    }
}

extension CognitoService {
    /// The longest a fetched key set is trusted, whatever `Cache-Control` says: a pool that
    /// rotates its keys is seen within a day, and one wrong answer cannot pin keys for years.
    public static let maxJWKSCacheSeconds: Double = 24 * 3600

    /// Where this endpoint publishes the pool's keys: `<endpoint>/<pool id>/.well-known/jwks.json`.
    public func jwksURL(userPoolId: String) -> String {
        endpoint + userPoolId + "/.well-known/jwks.json"
    }

    /// Fetches the pool's public signing keys from `jwksURL(userPoolId:)`. Returns the document
    /// and its `Cache-Control: max-age`, if any, capped at `maxJWKSCacheSeconds`.
    public func fetchJWKS(userPoolId: String) throws -> (data: Data, maxAge: Double?) {
        try fetchJWKS(url: jwksURL(userPoolId: userPoolId))
    }

    /// Fetches a key set from `url` (an issuer's, `CognitoIssuer.jwksURL`), as above.
    public func fetchJWKS(url: String) throws -> (data: Data, maxAge: Double?) {
        let request = HTTPRequest(
            url: url, method: "GET",
            headers: [("Accept", "application/json")])
        let response: HTTPResponse
        do {
            response = try transport.send(request)
        } catch let error as TransportError {
            var failure = CognitoError.transport(error)
            failure.endpoint = endpoint
            throw failure
        }
        guard response.status == 200 else {
            var failure = CognitoError.malformed(
                "the pool's key set answered HTTP \(response.status)", status: response.status)
            failure.endpoint = endpoint
            throw failure
        }
        _ = try JWKS(json: response.body)
        var maxAge: Double?
        if let cacheControl = response.headers["cache-control"] {
            for directive in cacheControl.split(separator: ",") {
                let parts = directive.trimmedBlanks().split(separator: "=")
                if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = Double(parts[1]),
                    seconds.isFinite, seconds >= 0
                {
                    maxAge = min(seconds, Self.maxJWKSCacheSeconds)
                }
            }
        }
        return (response.body, maxAge)
    }
}

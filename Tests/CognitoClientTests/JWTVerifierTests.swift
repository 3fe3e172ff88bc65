import Crypto
import Foundation
import XCTest
import _CryptoExtras

@testable import CognitoClient

/// Signature and claim checks with a real RSA key made in the test; the integration suite checks
/// tokens signed by the emulator against the JWKS it serves.
final class JWTVerifierTests: XCTestCase {
    private static let key = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    private let now = Date(timeIntervalSince1970: 1_800_000_000)
    private let expected = TokenExpectations(
        region: "eu-west-1", userPoolId: "eu-west-1_Pool", use: .access, clientId: "client1")

    private func b64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private func jwks(kid: String = "k1") throws -> JWKS {
        let primitives = try Self.key.publicKey.getKeyPrimitives()
        return JWKS(keys: [
            JWKS.Key(
                kid: kid, kty: "RSA", alg: "RS256", n: b64url(primitives.modulus),
                e: b64url(primitives.publicExponent), use: "sig")
        ])
    }

    private func sign(_ claims: [String: Any], header: [String: Any] = ["alg": "RS256", "kid": "k1"]) throws -> String {
        let head = b64url(try JSONSerialization.data(withJSONObject: header))
        let body = b64url(try JSONSerialization.data(withJSONObject: claims))
        let signature = try Self.key.signature(
            for: SHA256.hash(data: Data("\(head).\(body)".utf8)), padding: .insecurePKCS1v1_5)
        return "\(head).\(body).\(b64url(signature.rawRepresentation))"
    }

    private var goodClaims: [String: Any] {
        [
            "iss": expected.issuer, "token_use": "access", "client_id": "client1",
            "exp": now.timeIntervalSince1970 + 600, "username": "alice",
        ]
    }

    func testBase64URLDecodeTakesTheURLAlphabetUnpaddedOnly() {
        // 0xfb 0xff 0xbf is "+/+/" in base64 and "-_-_" in base64url.
        XCTAssertEqual(Base64URL.decode("-_-_").map { [UInt8]($0) }, [0xfb, 0xff, 0xbf])
        XCTAssertEqual(Base64URL.decode("+/+/").map { [UInt8]($0) }, [0xfb, 0xff, 0xbf])
        XCTAssertEqual(Base64URL.decode("eyJhIjoxfQ").map { String(decoding: $0, as: UTF8.self) }, #"{"a":1}"#)
        XCTAssertEqual(Base64URL.decode("YQ").map { [UInt8]($0) }, [0x61])
        XCTAssertEqual(Base64URL.decode("").map { [UInt8]($0) }, [])
        for refused in ["YQ==", "YQ=", "Y", "YQ.", "Y Q", "YQ\n", "éé"] {
            XCTAssertNil(Base64URL.decode(refused), refused)
        }
    }

    func testValidTokenPasses() throws {
        let token = try sign(goodClaims)
        XCTAssertNoThrow(try JWTVerifier.checkSignature(token, keys: try jwks()))
        XCTAssertEqual(try JWTVerifier.checkClaims(token, expected, now: now).username, "alice")
    }

    func testFlippedSignatureByteFails() throws {
        let token = try sign(goodClaims)
        var parts = token.split(separator: ".").map(String.init)
        var signature = Base64URL.decode(parts[2])!
        signature[10] ^= 0x01
        parts[2] = b64url(signature)
        XCTAssertThrowsError(try JWTVerifier.checkSignature(parts.joined(separator: "."), keys: try jwks()))
    }

    func testTamperedPayloadFails() throws {
        let token = try sign(goodClaims)
        var parts = token.split(separator: ".").map(String.init)
        var claims = goodClaims
        claims["username"] = "mallory"
        parts[1] = b64url(try JSONSerialization.data(withJSONObject: claims))
        XCTAssertThrowsError(try JWTVerifier.checkSignature(parts.joined(separator: "."), keys: try jwks()))
    }

    func testUnknownKidFails() throws {
        let token = try sign(goodClaims, header: ["alg": "RS256", "kid": "other"])
        XCTAssertThrowsError(try JWTVerifier.checkSignature(token, keys: try jwks())) { error in
            XCTAssertTrue((error as? JWTError)?.message.contains("no key other") ?? false)
            XCTAssertEqual((error as? JWTError)?.code, .unknownKey)
        }
    }

    func testAlgNoneFails() throws {
        let head = b64url(try JSONSerialization.data(withJSONObject: ["alg": "none", "kid": "k1"]))
        let body = b64url(try JSONSerialization.data(withJSONObject: goodClaims))
        XCTAssertThrowsError(try JWTVerifier.checkSignature("\(head).\(body).", keys: try jwks())) { error in
            XCTAssertTrue((error as? JWTError)?.message.contains("RS256") ?? false)
            XCTAssertEqual((error as? JWTError)?.code, .unsupportedAlgorithm)
        }
    }

    func testClaimChecks() throws {
        var wrongIssuer = goodClaims
        wrongIssuer["iss"] = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Other"
        var wrongUse = goodClaims
        wrongUse["token_use"] = "id"
        var wrongClient = goodClaims
        wrongClient["client_id"] = "client2"
        var expired = goodClaims
        expired["exp"] = now.timeIntervalSince1970 - 1
        var noExpiry = goodClaims
        noExpiry.removeValue(forKey: "exp")
        for (claims, fragment) in [
            (wrongIssuer, "issuer"), (wrongUse, "expected access"), (wrongClient, "client client2"),
            (expired, "expired"), (noExpiry, "no expiry"),
        ] {
            XCTAssertThrowsError(try JWTVerifier.checkClaims(try sign(claims), expected, now: now)) { error in
                XCTAssertTrue((error as? JWTError)?.message.contains(fragment) ?? false, "\(error) lacks \(fragment)")
            }
        }
    }

    func testTheUpdatedIssuerInThePrimaryRegionIsAcceptedAndNothingElse() throws {
        let pool = expected.issuer.split(separator: "/").last.map(String.init)!
        let primary = String(pool.split(separator: "_")[0])
        var updated = goodClaims
        updated["iss"] = "https://issuer-cognito-idp.\(primary).amazonaws.com/\(pool)"
        XCTAssertNoThrow(try JWTVerifier.checkClaims(try sign(updated), expected, now: now))
        XCTAssertEqual(
            CognitoIssuer.jwksURL(issuer: updated["iss"] as! String),
            "https://issuer-cognito-idp.\(primary).amazonaws.com/\(pool)/.well-known/jwks.json")
        for third in [
            "https://issuer-cognito-idp.ap-south-1.amazonaws.com/\(pool)",
            "https://issuer-cognito-idp.\(primary).amazonaws.com/\(pool)/",
            "http://issuer-cognito-idp.\(primary).amazonaws.com/\(pool)",
            "https://issuer-cognito-idp.\(primary).amazonaws.com/\(primary)_Other",
        ] {
            var claims = goodClaims
            claims["iss"] = third
            XCTAssertThrowsError(try JWTVerifier.checkClaims(try sign(claims), expected, now: now), third) { error in
                XCTAssertEqual((error as? JWTError)?.code, .claimMismatch)
            }
        }
        XCTAssertNil(CognitoIssuer.updated(userPoolId: "NoRegion"))
    }

    func testIdTokenUsesAudience() throws {
        let idExpected = TokenExpectations(
            region: "eu-west-1", userPoolId: "eu-west-1_Pool", use: .id, clientId: "client1")
        let token = try sign([
            "iss": expected.issuer, "token_use": "id", "aud": "client1", "exp": now.timeIntervalSince1970 + 60,
        ])
        XCTAssertNoThrow(try JWTVerifier.checkClaims(token, idExpected, now: now))
    }
}

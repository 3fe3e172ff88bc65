import Crypto
import Foundation
import XCTest
import _CryptoExtras

@testable import CognitoClient

/// Keys and tokens forged in the test that the verifier must refuse (a
/// 1024-bit key, a key published for encryption or another algorithm, a token not yet valid).
final class JWTHardeningTests: XCTestCase {
    private static let key2048 = try! _RSA.Signing.PrivateKey(keySize: .bits2048)
    private static let key1024 = try! _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024))
    private let now = Date(timeIntervalSince1970: 1_800_000_000)
    private let expected = TokenExpectations(
        region: "eu-west-1", userPoolId: "eu-west-1_Pool", use: .access, clientId: "client1")

    private func b64url(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private func jwks(_ key: _RSA.Signing.PrivateKey, alg: String? = "RS256", use: String? = "sig") throws -> JWKS {
        let primitives = try key.publicKey.getKeyPrimitives()
        return JWKS(keys: [
            JWKS.Key(
                kid: "k1", kty: "RSA", alg: alg, n: b64url(primitives.modulus),
                e: b64url(primitives.publicExponent), use: use)
        ])
    }

    private func sign(_ claims: [String: Any], with key: _RSA.Signing.PrivateKey = key2048) throws -> String {
        let head = b64url(try JSONSerialization.data(withJSONObject: ["alg": "RS256", "kid": "k1"]))
        let body = b64url(try JSONSerialization.data(withJSONObject: claims))
        let signature = try key.signature(
            for: SHA256.hash(data: Data("\(head).\(body)".utf8)), padding: .insecurePKCS1v1_5)
        return "\(head).\(body).\(b64url(signature.rawRepresentation))"
    }

    private var claims: [String: Any] {
        ["iss": expected.issuer, "token_use": "access", "client_id": "client1", "exp": now.timeIntervalSince1970 + 600]
    }

    private func assertRefused(
        _ body: () throws -> Void, _ fragment: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            let message = (error as? JWTError)?.message ?? "\(error)"
            XCTAssertTrue(message.contains(fragment), "\(message) lacks \(fragment)", file: file, line: line)
        }
    }

    func testA1024BitKeyIsRefusedEvenWithAValidSignature() throws {
        let token = try sign(claims, with: Self.key1024)
        let keys = try jwks(Self.key1024)
        assertRefused({ try JWTVerifier.checkSignature(token, keys: keys) }, "1024-bit")
        // The same token shape with a 2048-bit key passes: the refusal is about the size.
        XCTAssertNoThrow(try JWTVerifier.checkSignature(try sign(claims), keys: try jwks(Self.key2048)))
    }

    func testAKeyForEncryptionOrAnotherAlgorithmIsRefused() throws {
        let token = try sign(claims)
        assertRefused({ try JWTVerifier.checkSignature(token, keys: try jwks(Self.key2048, use: "enc")) }, "\"enc\"")
        assertRefused({ try JWTVerifier.checkSignature(token, keys: try jwks(Self.key2048, alg: "RS512")) }, "RS512")
        // RFC 7517 makes both optional: a key that does not say is usable.
        XCTAssertNoThrow(try JWTVerifier.checkSignature(token, keys: try jwks(Self.key2048, alg: nil, use: nil)))
    }

    func testATokenNotYetValidIsRefused() throws {
        var future = claims
        future["nbf"] = now.timeIntervalSince1970 + 3600
        assertRefused({ _ = try JWTVerifier.checkClaims(try sign(future), expected, now: now) }, "not valid before")
        var notANumber = claims
        notANumber["nbf"] = "soon"
        assertRefused({ _ = try JWTVerifier.checkClaims(try sign(notANumber), expected, now: now) }, "nbf")
        var past = claims
        past["nbf"] = now.timeIntervalSince1970 - 10
        XCTAssertNoThrow(try JWTVerifier.checkClaims(try sign(past), expected, now: now))
    }

    func testAnUnknownKidIsItsOwnReason() throws {
        let token = try sign(claims)
        var keys = try jwks(Self.key2048)
        keys.keys[0].kid = "rotated"
        XCTAssertThrowsError(try JWTVerifier.checkSignature(token, keys: keys)) { error in
            XCTAssertEqual((error as? JWTError)?.code, .unknownKey)
        }
        XCTAssertThrowsError(try JWTVerifier.checkSignature(token, keys: try jwks(Self.key1024))) { error in
            XCTAssertEqual((error as? JWTError)?.code, .unusableKey)
        }
    }

    func testModulusBitCount() {
        XCTAssertEqual(JWTVerifier.bitCount(Data([0x00, 0x01])), 1)
        XCTAssertEqual(JWTVerifier.bitCount(Data([0x80] + [UInt8](repeating: 0, count: 255))), 2048)
        XCTAssertEqual(JWTVerifier.bitCount(Data([0x00, 0x7f] + [UInt8](repeating: 0xff, count: 255))), 2047)
        XCTAssertEqual(JWTVerifier.bitCount(Data()), 0)
    }

    func testAHugeMaxAgeIsCappedAtOneDay() throws {
        let transport = OneAnswer(
            HTTPResponse(
                status: 200, headers: ["cache-control": "public, max-age=3153600000"],
                body: Data(#"{"keys":[]}"#.utf8)))
        let service = CognitoService(endpoint: "http://127.0.0.1:9/", transport: transport)
        XCTAssertEqual(try service.fetchJWKS(userPoolId: "eu-west-1_Pool").maxAge, 86_400)
        XCTAssertEqual(transport.urls, ["http://127.0.0.1:9/eu-west-1_Pool/.well-known/jwks.json"])
    }

    private final class OneAnswer: HTTPTransport {
        let response: HTTPResponse
        var urls: [String] = []
        init(_ response: HTTPResponse) { self.response = response }
        func send(_ request: HTTPRequest) throws -> HTTPResponse {
            urls.append(request.url)
            return response
        }
    }
}

import Crypto
import Foundation
import XCTest

@testable import CognitoClient

/// Passkeys as sent to Cognito: clientDataJSON written by this client, the RegistrationResponseJSON
/// and AuthenticationResponseJSON shapes, the options read, the WebAuthn operations' requests and
/// their refusals.
final class WebAuthnTests: XCTestCase {
    private func service(_ transport: ScriptedTransport) -> CognitoService {
        CognitoService(
            endpoint: "https://cognito-idp.us-east-1.amazonaws.com/", transport: transport,
            retryPolicy: RetryPolicy(maxAttempts: 1))
    }

    func testClientDataJSONIsWhatABrowserWrites() {
        let data = WebAuthnClientData(.get, challenge: "q83v_-", rpId: "auth.example.com")
        XCTAssertEqual(
            String(decoding: data.json, as: UTF8.self),
            #"{"type":"webauthn.get","challenge":"q83v_-","origin":"https://auth.example.com","crossOrigin":false}"#)
        XCTAssertEqual(data.hash, Array(SHA256.hash(data: data.json)))
        let create = WebAuthnClientData(.create, challenge: "a\"b", rpId: "x.example")
        let parsed = try? JSONSerialization.jsonObject(with: Data(create.json)) as? [String: Any]
        XCTAssertEqual(parsed?["type"] as? String, "webauthn.create")
        XCTAssertEqual(parsed?["challenge"] as? String, "a\"b")
    }

    func testRegistrationResponseIsWhole() throws {
        let key = P256.Signing.PrivateKey().publicKey
        let raw = [UInt8](key.rawRepresentation)
        let registration = WebAuthnRegistration(
            credentialId: [1, 2, 250], clientData: WebAuthnClientData(.create, challenge: "c", rpId: "rp.example"),
            authenticatorData: [9, 9], attestationFormat: "packed", attestationStatement: [0xa0], algorithm: -7,
            publicKeyDER: WebAuthnAlgorithm.subjectPublicKeyInfo(algorithm: -7, key: raw), transports: ["usb"])
        guard case .object(let top) = registration.json, case .object(let response)? = top["response"] else {
            return XCTFail("not an object")
        }
        XCTAssertEqual(
            Set(top.keys), ["id", "rawId", "type", "authenticatorAttachment", "clientExtensionResults", "response"])
        XCTAssertEqual(
            Set(response.keys),
            [
                "clientDataJSON", "attestationObject", "transports", "publicKeyAlgorithm",
                "publicKey", "authenticatorData",
            ])
        XCTAssertEqual(top["id"], .string("AQL6"))
        XCTAssertEqual(top["rawId"], top["id"])
        XCTAssertEqual(response["publicKeyAlgorithm"], .number(-7))
        // The SPKI is one swift-crypto reads back as the same key.
        let der = try XCTUnwrap(response["publicKey"]?.string.flatMap(Base64URL.decode))
        XCTAssertEqual(try P256.Signing.PublicKey(derRepresentation: der).rawRepresentation, key.rawRepresentation)
        // {"fmt": "packed", "attStmt": {}, "authData": h'0909'} in canonical CBOR.
        XCTAssertEqual(
            registration.attestationObject,
            [0xa3, 0x63] + Array("fmt".utf8) + [0x66] + Array("packed".utf8) + [0x67] + Array("attStmt".utf8)
                + [0xa0, 0x68] + Array("authData".utf8) + [0x42, 9, 9])
    }

    func testAssertionTextCarriesTheResponse() throws {
        let assertion = WebAuthnAssertion(
            credentialId: [0xff], clientData: WebAuthnClientData(.get, challenge: "c", rpId: "r"),
            authenticatorData: [1], signature: [2], userHandle: [])
        let parsed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(assertion.text.utf8)) as? [String: Any])
        let response = try XCTUnwrap(parsed["response"] as? [String: Any])
        XCTAssertEqual(parsed["id"] as? String, "_w")
        XCTAssertEqual(parsed["type"] as? String, "public-key")
        XCTAssertEqual(Set(response.keys), ["clientDataJSON", "authenticatorData", "signature"])  // no empty userHandle
    }

    func testOptionsAreRead() throws {
        let document = try JSONDecoder().decode(
            JSONValue.self,
            from: Data(
                #"""
                {"challenge":"abc","rp":{"id":"auth.example.com","name":"Pool"},"user":{"id":"dXNlcg","name":"alice","displayName":"Alice"},
                 "pubKeyCredParams":[{"type":"public-key","alg":-257},{"type":"public-key","alg":-7}],"timeout":60000,
                 "excludeCredentials":[{"type":"public-key","id":"AQI"}],
                 "authenticatorSelection":{"residentKey":"required","userVerification":"required"}}
                """#.utf8))
        let options = try XCTUnwrap(WebAuthnCreationOptions.from(document))
        XCTAssertEqual(options.rpId, "auth.example.com")
        XCTAssertEqual(options.algorithm(among: WebAuthnAlgorithm.supported), -7)
        XCTAssertNil(options.algorithm(among: [-8]))
        XCTAssertTrue(options.wantsResidentKey)
        XCTAssertEqual(options.excludeCredentials?.first?.rawId, [1, 2])
        let request = try XCTUnwrap(
            WebAuthnRequestOptions.from(
                json: #"{"challenge":"x","rpId":"r","allowCredentials":[],"userVerification":"preferred"}"#))
        XCTAssertEqual(request.rpId, "r")
        XCTAssertNil(WebAuthnRequestOptions.from(json: "not json"))
    }

    func testCompleteSendsTheCredentialDocumentAsItIs() throws {
        let transport = ScriptedTransport([ScriptedTransport.json([:])])
        let credential = JSONValue.object([
            "rawId": .string("AQ"), "response": .object(["clientDataJSON": .string("e30")]),
        ])
        try service(transport).completeWebAuthnRegistration(accessToken: "at", credential: credential)
        let body = transport.body(0)
        XCTAssertEqual(body["AccessToken"] as? String, "at")
        // The document's own keys are not re-cased like the request's members.
        let sent = try XCTUnwrap(body["Credential"] as? [String: Any])
        XCTAssertEqual(sent["rawId"] as? String, "AQ")
        XCTAssertEqual((sent["response"] as? [String: Any])?["clientDataJSON"] as? String, "e30")
    }

    func testListFollowsEveryPage() throws {
        let transport = ScriptedTransport([
            ScriptedTransport.json([
                "Credentials": [["CredentialId": "a", "CreatedAt": 1.5e9, "AuthenticatorTransports": ["usb"]]],
                "NextToken": "t1",
            ]),
            ScriptedTransport.json(["Credentials": [["CredentialId": "b", "FriendlyCredentialName": "Key"]]]),
        ])
        let listed = try service(transport).listWebAuthnCredentials(accessToken: "at")
        XCTAssertEqual(listed.map(\.credentialId), ["a", "b"])
        XCTAssertEqual(transport.body(1)["NextToken"] as? String, "t1")
        XCTAssertEqual(listed[0].createdAt, 1.5e9)
    }

    func testWebAuthnRefusalsAreClassified() {
        let expected: [String: ServiceRefusal] = [
            "WebAuthnNotEnabledException": .webAuthnNotEnabled,
            "WebAuthnConfigurationMissingException": .webAuthnConfigurationMissing,
            "WebAuthnChallengeNotFoundException": .webAuthnChallengeNotFound,
            "WebAuthnRelyingPartyMismatchException": .webAuthnRelyingPartyMismatch,
            "WebAuthnOriginNotAllowedException": .webAuthnOriginNotAllowed,
            "WebAuthnClientMismatchException": .webAuthnClientMismatch,
            "WebAuthnCredentialNotSupportedException": .webAuthnCredentialNotSupported,
            "ForbiddenException": .forbidden,
            "OperationNotEnabledException": .operationNotEnabled,
        ]
        for (type, refusal) in expected {
            XCTAssertEqual(ServiceRefusal.classify(errorType: type, message: "m"), refusal, type)
        }
    }
}

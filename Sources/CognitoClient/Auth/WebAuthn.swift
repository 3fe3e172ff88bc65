import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Passkeys (WebAuthn) as Cognito speaks them: the options it sends (StartWebAuthnRegistration's
// CredentialCreationOptions, WEB_AUTHN's CREDENTIAL_REQUEST_OPTIONS), the clientDataJSON this
// client writes in the browser's place, and the RegistrationResponseJSON /
// AuthenticationResponseJSON it answers with (WebAuthn Level 3, §5.1 toJSON). Values only: the
// security key itself is the executable's business.

/// `PublicKeyCredentialDescriptorJSON`.
public struct WebAuthnCredentialDescriptor: Codable, Sendable, Equatable {
    public var type: String?
    public var id: String
    public var transports: [String]?

    /// The credential id's bytes (nil when it is not base64url).
    public var rawId: [UInt8]? { Base64URL.decode(id).map { [UInt8]($0) } }
}

/// `PublicKeyCredentialCreationOptionsJSON`, the parts a security key needs.
public struct WebAuthnCreationOptions: Decodable, Sendable, Equatable {
    public struct RelyingParty: Decodable, Sendable, Equatable {
        public var id: String?
        public var name: String?
    }
    public struct User: Decodable, Sendable, Equatable {
        public var id: String
        public var name: String
        public var displayName: String?
    }
    public struct Parameter: Decodable, Sendable, Equatable {
        public var type: String?
        public var alg: Int
    }
    public struct Selection: Decodable, Sendable, Equatable {
        public var authenticatorAttachment: String?
        public var residentKey: String?
        public var requireResidentKey: Bool?
        public var userVerification: String?
    }

    public var challenge: String
    public var rp: RelyingParty
    public var user: User
    public var pubKeyCredParams: [Parameter]?
    public var timeout: Double?
    public var excludeCredentials: [WebAuthnCredentialDescriptor]?
    public var authenticatorSelection: Selection?
    public var attestation: String?

    /// The options in `document` (the service's JSON); nil for anything not shaped like them.
    public static func from(_ document: JSONValue) -> WebAuthnCreationOptions? {
        guard let data = try? JSONEncoder().encode(document) else { return nil }
        return try? JSONDecoder().decode(WebAuthnCreationOptions.self, from: data)
    }

    /// The relying party: rp.id, as Cognito always sends it.
    public var rpId: String? { rp.id }

    /// A resident (discoverable) key asked for: `residentKey` required or preferred, or the older
    /// `requireResidentKey`.
    public var wantsResidentKey: Bool {
        if let residentKey = authenticatorSelection?.residentKey {
            return residentKey == "required" || residentKey == "preferred"
        }
        return authenticatorSelection?.requireResidentKey ?? false
    }

    /// The first algorithm offered that `supported` has, in the service's order of preference
    /// (WebAuthn's default, ES256 and RS256, when none is listed).
    public func algorithm(among supported: [Int]) -> Int? {
        let offered = pubKeyCredParams?.filter { $0.type == nil || $0.type == "public-key" }.map(\.alg) ?? [-7, -257]
        return offered.first { supported.contains($0) }
    }
}

/// `PublicKeyCredentialRequestOptionsJSON` (WEB_AUTHN's CREDENTIAL_REQUEST_OPTIONS).
public struct WebAuthnRequestOptions: Decodable, Sendable, Equatable {
    public var challenge: String
    public var rpId: String?
    public var timeout: Double?
    public var allowCredentials: [WebAuthnCredentialDescriptor]?
    public var userVerification: String?

    /// The options in the challenge parameter's text; nil when it is not them.
    public static func from(json text: String) -> WebAuthnRequestOptions? {
        try? JSONDecoder().decode(WebAuthnRequestOptions.self, from: Data(text.utf8))
    }
}

/// `CollectedClientData`, written by this client as a browser would, and its SHA-256 (what the
/// security key signs over).
public struct WebAuthnClientData: Sendable, Equatable {
    public enum Ceremony: String, Sendable {
        case create = "webauthn.create"
        case get = "webauthn.get"
    }

    public var json: [UInt8]

    /// `{"type":…,"challenge":…,"origin":"https://<rpId>","crossOrigin":false}`: the challenge as
    /// given, the origin the relying party's, in the order browsers write them.
    public init(_ ceremony: Ceremony, challenge: String, rpId: String) {
        let text =
            "{\"type\":\(Self.quoted(ceremony.rawValue)),\"challenge\":\(Self.quoted(challenge)),"
            + "\"origin\":\(Self.quoted("https://" + rpId)),\"crossOrigin\":false}"
        json = Array(text.utf8)
    }

    public var hash: [UInt8] { Array(SHA256.hash(data: json)) }

    private static func quoted(_ text: String) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        let data = (try? encoder.encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}

/// The RegistrationResponseJSON of a new credential, whole: a caller that sent less was refused
/// (aws/aws-sdk-net#4386).
public struct WebAuthnRegistration: Sendable, Equatable {
    public var credentialId: [UInt8]
    public var clientData: WebAuthnClientData
    public var authenticatorData: [UInt8]
    public var attestationFormat: String
    /// The attestation statement, a CBOR map as the key sent it (empty: `{}`).
    public var attestationStatement: [UInt8]
    public var algorithm: Int
    /// The public key as SubjectPublicKeyInfo DER (nil for an algorithm without one here).
    public var publicKeyDER: [UInt8]?
    public var transports: [String]

    public init(
        credentialId: [UInt8], clientData: WebAuthnClientData, authenticatorData: [UInt8], attestationFormat: String,
        attestationStatement: [UInt8], algorithm: Int, publicKeyDER: [UInt8]?, transports: [String]
    ) {
        self.credentialId = credentialId
        self.clientData = clientData
        self.authenticatorData = authenticatorData
        self.attestationFormat = attestationFormat
        self.attestationStatement = attestationStatement
        self.algorithm = algorithm
        self.publicKeyDER = publicKeyDER
        self.transports = transports
    }

    /// The attestation object: CBOR `{"fmt": …, "attStmt": …, "authData": …}` (canonical order).
    public var attestationObject: [UInt8] {
        var out: [UInt8] = [0xa3]
        out += CBORWriter.text("fmt") + CBORWriter.text(attestationFormat)
        out += CBORWriter.text("attStmt") + (attestationStatement.isEmpty ? [0xa0] : attestationStatement)
        out += CBORWriter.text("authData") + CBORWriter.bytes(authenticatorData)
        return out
    }

    /// The document CompleteWebAuthnRegistration's Credential carries.
    public var json: JSONValue {
        let id = Base64URL.encode(credentialId)
        var response: [String: JSONValue] = [
            "clientDataJSON": .string(Base64URL.encode(clientData.json)),
            "attestationObject": .string(Base64URL.encode(attestationObject)),
            "transports": .array(transports.map(JSONValue.string)),
            "publicKeyAlgorithm": .number(Double(algorithm)),
            "authenticatorData": .string(Base64URL.encode(authenticatorData)),
        ]
        if let publicKeyDER { response["publicKey"] = .string(Base64URL.encode(publicKeyDER)) }
        return .object([
            "id": .string(id), "rawId": .string(id), "type": .string("public-key"),
            "authenticatorAttachment": .string("cross-platform"), "clientExtensionResults": .object([:]),
            "response": .object(response),
        ])
    }
}

/// The AuthenticationResponseJSON of one assertion (WEB_AUTHN's CREDENTIAL).
public struct WebAuthnAssertion: Sendable, Equatable {
    public var credentialId: [UInt8]
    public var clientData: WebAuthnClientData
    public var authenticatorData: [UInt8]
    public var signature: [UInt8]
    public var userHandle: [UInt8]

    public init(
        credentialId: [UInt8], clientData: WebAuthnClientData, authenticatorData: [UInt8], signature: [UInt8],
        userHandle: [UInt8]
    ) {
        self.credentialId = credentialId
        self.clientData = clientData
        self.authenticatorData = authenticatorData
        self.signature = signature
        self.userHandle = userHandle
    }

    public var json: JSONValue {
        let id = Base64URL.encode(credentialId)
        var response: [String: JSONValue] = [
            "clientDataJSON": .string(Base64URL.encode(clientData.json)),
            "authenticatorData": .string(Base64URL.encode(authenticatorData)),
            "signature": .string(Base64URL.encode(signature)),
        ]
        if !userHandle.isEmpty { response["userHandle"] = .string(Base64URL.encode(userHandle)) }
        return .object([
            "id": .string(id), "rawId": .string(id), "type": .string("public-key"),
            "authenticatorAttachment": .string("cross-platform"), "clientExtensionResults": .object([:]),
            "response": .object(response),
        ])
    }

    /// The JSON text WEB_AUTHN's CREDENTIAL answer carries (keys sorted).
    public var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(json)) ?? Data(), as: UTF8.self)
    }
}

/// COSE algorithms authctl registers with, and their keys as SubjectPublicKeyInfo DER.
public enum WebAuthnAlgorithm {
    public static let es256 = -7
    public static let edDSA = -8
    public static let supported = [es256, edDSA]

    /// `key` in libfido2's form (ES256: x‖y, 64 bytes; EdDSA: 32 bytes) as SPKI DER.
    public static func subjectPublicKeyInfo(algorithm: Int, key: [UInt8]) -> [UInt8]? {
        switch (algorithm, key.count) {
        case (es256, 64):
            // SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING 04‖x‖y }
            return [
                0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a, 0x86,
                0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00, 0x04,
            ] + key
        case (edDSA, 32):
            return [0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00] + key
        default:
            return nil
        }
    }
}

/// The CBOR this client writes (major types 2 and 3, definite length).
enum CBORWriter {
    static func head(_ major: UInt8, _ length: Int) -> [UInt8] {
        let type = major << 5
        switch length {
        case 0..<24: return [type | UInt8(length)]
        case 24..<256: return [type | 24, UInt8(length)]
        case 256..<65536: return [type | 25, UInt8(length >> 8), UInt8(length & 0xff)]
        default: return [type | 26] + (0..<4).reversed().map { UInt8((length >> ($0 * 8)) & 0xff) }
        }
    }

    static func bytes(_ value: [UInt8]) -> [UInt8] { head(2, value.count) + value }
    static func text(_ value: String) -> [UInt8] { head(3, value.utf8.count) + Array(value.utf8) }
}

extension Base64URL {
    /// Base64url without padding (WebAuthn's JSON encoding of bytes).
    public static func encode<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Data(bytes).base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }
}

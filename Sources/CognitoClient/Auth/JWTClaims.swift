#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The claims of a Cognito JWT, decoded without checking the signature (that is `verify`'s job).
public struct JWTClaims: Sendable {
    /// Every claim as decoded JSON.
    public let raw: [String: JSONValue]

    public init(raw: [String: JSONValue]) {
        self.raw = raw
    }

    /// Decodes the payload (second part) of a compact JWT.
    public init(token: String) throws {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw JWTError.malformed("a JWT has three parts separated by dots; this token has \(parts.count)")
        }
        guard let payload = Base64URL.decode(String(parts[1])) else {
            throw JWTError.malformed("the JWT payload is not base64url")
        }
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: payload) else {
            throw JWTError.malformed("the JWT payload is not a JSON object")
        }
        self.raw = object
    }

    public func string(_ name: String) -> String? {
        if case .string(let value)? = raw[name] { return value }
        return nil
    }

    /// A NumericDate claim; nil when absent, not a number, or outside 1970 to 9999 (OutsideNumbers).
    public func date(_ name: String) -> Date? {
        if case .number(let value)? = raw[name] { return OutsideNumbers.date(epochSeconds: value) }
        return nil
    }

    public var subject: String? { string("sub") }
    /// `username` in access tokens, `cognito:username` in id tokens.
    public var username: String? { string("username") ?? string("cognito:username") }
    public var expiresAt: Date? { date("exp") }
    public var issuedAt: Date? { date("iat") }
    public var notBefore: Date? { date("nbf") }
    public var issuer: String? { string("iss") }
    public var tokenUse: String? { string("token_use") }
    public var clientId: String? { string("client_id") }
    public var audience: String? { string("aud") }
    public var email: String? { string("email") }

    public var groups: [String] {
        guard case .array(let values)? = raw["cognito:groups"] else { return [] }
        return values.compactMap { if case .string(let group) = $0 { return group } else { return nil } }
    }
}

/// A token or key set that fails a check; `code` says which, for callers that act on it.
public struct JWTError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// Not a JWT or JWKS at all: parts, base64url or JSON.
        case malformed
        /// A claim is not what was expected (issuer, token_use, client, exp).
        case claimMismatch
        /// The token has expired.
        case expired
        /// The token's `nbf` is in the future.
        case notYetValid
        /// The signing algorithm is not RS256, or the token names no key.
        case unsupportedAlgorithm
        /// The key set has no key with the token's `kid` (the pool may have rotated its keys).
        case unknownKey
        /// The key named by `kid` is not a usable RSA public key.
        case unusableKey
        /// The signature does not verify.
        case badSignature
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public static func malformed(_ message: String) -> JWTError { JWTError(.malformed, message: message) }
    public var description: String { message }
}

/// A JSON value, for claims and other free-form documents.
public enum JSONValue: Codable, Sendable, Equatable {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

public enum Base64URL {
    /// Byte by byte: `String.replacing` runs _StringProcessing's searcher (0.45 M instructions and
    /// its code pages on every `token`, which decodes two JWTs).
    public static func decode(_ text: String) -> Data? {
        var base64 = [UInt8]()
        base64.reserveCapacity(text.utf8.count + 3)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "="): return nil
            case UInt8(ascii: "-"): base64.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): base64.append(UInt8(ascii: "/"))
            default: base64.append(byte)
            }
        }
        base64 += repeatElement(UInt8(ascii: "="), count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: Data(base64))
    }
}

import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Proof Key for Code Exchange (RFC 7636) with S256, and the other one-time values of a
/// browser sign-in. Everything comes from the system's random source
/// (`SystemRandomNumberGenerator`: getrandom(2) on Linux).
public struct PKCE: Sendable {
    /// 64 characters of base64url (48 random bytes): within RFC 7636's 43–128, from its alphabet.
    public let verifier: String
    /// BASE64URL(SHA256(verifier)), sent in the authorize URL.
    public let challenge: String
    public static let method = "S256"

    public init() {
        self.init(verifier: Self.randomToken(bytes: 48))
    }

    /// A given verifier (tests use RFC 7636's example).
    public init(verifier: String) {
        self.verifier = verifier
        self.challenge = Self.base64URL(Data(SHA256.hash(data: Data(verifier.utf8))))
    }

    /// `bytes` random bytes as base64url without padding: for `state` and `nonce` too.
    public static func randomToken(bytes: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return base64URL(Data((0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString()
            .replacing("+", with: "-")
            .replacing("/", with: "_")
            .replacing("=", with: "")
    }
}

import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The hand-out of a new authenticator secret: its `otpauth://` URI (Key Uri Format), shown as
/// text and drawn as a QR code (`TerminalQRCode`).
public enum AuthenticatorURI {
    /// `otpauth://totp/<issuer>:<label>?secret=...&issuer=...`. The label is the name the person
    /// knows the account by (what they typed, or the email), not an internal id.
    public static func otpauth(secret: String, username: String, issuer: String) -> String {
        let encodedIssuer = escape(issuer)
        let label = encodedIssuer + ":" + escape(username)
        return "otpauth://totp/\(label)?secret=\(secret)&issuer=\(encodedIssuer)"
    }

    /// ASCII letters and digits and `-._~` as they are, every other byte percent-encoded (what
    /// `addingPercentEncoding` with `CharacterSet.alphanumerics` and `-._~` gave).
    private static func escape(_ text: String) -> String {
        PercentEncoding.encode(text, keeping: PercentEncoding.isUnreserved)
    }

    /// The name to label a signed-in user's authenticator with: the username, unless the pool
    /// generated it (a UUID, where people sign in with their email), then the email.
    public static func label(username: String, attributes: [String: String]) -> String {
        if UUID(uuidString: username) != nil, let email = attributes["email"], !email.isEmpty { return email }
        return username
    }
}

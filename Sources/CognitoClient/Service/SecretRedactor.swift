#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Keeps secrets out of error messages. A service (or an emulator, or a proxy) may quote the
/// request back in its error text: moto's NotAuthorizedException for GlobalSignOut is the access
/// token itself. Every message taken from an answer passes through here before it reaches a user.
struct SecretRedactor {
    /// Request fields whose values are secret, wherever they stand in the JSON (top level, or
    /// inside AuthParameters / ChallengeResponses).
    static let secretKeys: Set<String> = [
        "AccessToken", "IdToken", "RefreshToken", "Token", "Session", "ClientSecret", "SecretHash",
        "Password", "PreviousPassword", "ProposedPassword", "UserCode", "ConfirmationCode",
        "PASSWORD", "NEW_PASSWORD", "REFRESH_TOKEN", "SECRET_HASH", "PASSWORD_CLAIM_SIGNATURE",
        "PASSWORD_CLAIM_SECRET_BLOCK", "SRP_A", "SOFTWARE_TOKEN_MFA_CODE", "SMS_MFA_CODE",
        "EMAIL_OTP_CODE", "DEVICE_KEY",
    ]
    static let placeholder = "[redacted]"

    private let secrets: [String]

    /// The secret values of a JSON request body (longest first, so a secret that contains
    /// another is replaced whole).
    init(requestBody: Data) {
        var found: [String] = []
        if let document = JSONValue.document(requestBody) {
            Self.collect(document, into: &found)
        }
        secrets = Self.withEncodings(found)
    }

    /// Given secret values (a form-encoded request's code, verifier, token and client secret,
    /// and the `Authorization: Basic` credentials exactly as sent).
    init(secretValues: [String]) {
        secrets = Self.withEncodings(secretValues)
    }

    /// Each secret as authctl sends it and as an endpoint may echo it (a
    /// proxy echoing the request's `Authorization: Basic` header showed the client secret in
    /// base64): raw, percent- and form-encoded, JSON-escaped and base64 (padded or not), longest
    /// first so a secret that contains another is replaced whole.
    private static func withEncodings(_ values: [String]) -> [String] {
        var all = Set<String>()
        for value in values where !value.isEmpty {
            let base64 = Data(value.utf8).base64EncodedString()
            let unpadded = String(base64.reversed().drop { $0 == "=" }.reversed())
            for encoded in [
                value, FormEncoding.escape(value), FormEncoding.escape(value).replacing("%20", with: "+"),
                base64, unpadded,
            ] + jsonEscaped(value) where encoded.count >= 4 || encoded == value {
                all.insert(encoded)
            }
        }
        return all.sorted { $0.count > $1.count }
    }

    /// The string as JSON encoders write it inside quotes: with `\/` (Foundation's) and with `/`.
    private static func jsonEscaped(_ value: String) -> [String] {
        guard let data = try? JSONEncoder().encode(value) else { return [] }
        let escaped = String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
        return [escaped, escaped.replacing("\\/", with: "/")]
    }

    private static func collect(_ value: JSONValue, into found: inout [String]) {
        switch value {
        case .object(let members):
            for (key, inner) in members {
                if secretKeys.contains(key), let string = inner.string, !string.isEmpty {
                    found.append(string)
                } else {
                    collect(inner, into: &found)
                }
            }
        case .array(let elements):
            for inner in elements { collect(inner, into: &found) }
        default:
            break
        }
    }

    /// `message` with every secret of the request, in any letter case (a service may echo a
    /// password upper- or lower-cased), and anything shaped like a JWT or JWE (base64url segments
    /// starting with `eyJ`, joined by dots), replaced by `[redacted]`.
    func redact(_ message: String) -> String {
        var result = message
        for secret in secrets {
            result = result.replacing(Regex<AnyRegexOutput>(verbatim: secret).ignoresCase(), with: Self.placeholder)
        }
        return Self.redactTokens(result)
    }

    static func redactTokens(_ message: String) -> String {
        message.replacing(token, with: placeholder)
    }

    /// A JWT or JWE: base64url segments starting with `eyJ`, joined by dots (a Swift regex
    /// literal, checked when compiled: NSRegularExpression is in the full Foundation, and a
    /// pattern parsed at run time would need a `try` that cannot fail here).
    private static var token: Regex<Substring> {
        #/eyJ[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]*){0,3}\.[A-Za-z0-9_-]+/#
    }
}

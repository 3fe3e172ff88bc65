import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// SECRET_HASH for app clients that have a client secret.
public enum SecretHash {
    /// base64(HMAC-SHA256(key: clientSecret, message: username + clientId)), all UTF-8.
    ///
    /// `username` is the name the call is about: for REFRESH_TOKEN_AUTH the username Cognito
    /// knows (the `username` claim / USER_ID_FOR_SRP), not an alias such as an email address.
    public static func compute(username: String, clientId: String, clientSecret: String) -> String {
        let mac = HMAC<SHA256>.authenticationCode(
            for: Array((username + clientId).utf8),
            using: SymmetricKey(data: Array(clientSecret.utf8)))
        return Data(mac).base64EncodedString()
    }
}

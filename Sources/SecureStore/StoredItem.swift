#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One item as the kernel-keyring and file stores keep it: the whole `SecretKey`, the label and
/// the secret, as JSON (so a person who opens a file with `age -d` or a key with `keyctl print`
/// reads what it is).
struct StoredItem: Codable, Sendable, Equatable {
    var kind: String
    var profile: String
    var userPoolId: String
    var clientId: String
    var label: String
    var secret: String

    init(key: SecretKey, label: String, secret: String) {
        kind = key.kind
        profile = key.profile
        userPoolId = key.userPoolId
        clientId = key.clientId
        self.label = label
        self.secret = secret
    }

    var key: SecretKey {
        SecretKey(kind: kind, profile: profile, userPoolId: userPoolId, clientId: clientId)
    }

    /// The secret for a read of `key`: `key.clientId`, when not empty, must match (as in the
    /// Secret Service store).
    func secret(for key: SecretKey) -> String? {
        key.clientId.isEmpty || key.clientId == clientId ? secret : nil
    }

    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}

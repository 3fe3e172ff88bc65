#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The relying party a profile's passkeys are for (issue 31, finding 1). Whoever answers as the
/// service (a hostile endpoint, a relay) writes the WebAuthn options, rpId included, and the key
/// signs for any relying party it holds a resident passkey of: so the rpId is never taken from
/// the answer. It is the profile's `passkey_rp_id` (recorded at the first `passkey add`, or set by
/// hand), else the host of its managed-login domain; any other rpId is refused (exit 78) before
/// the key is touched.
package struct RelyingPartyPin {
    package let profile: String
    package let configFile: String
    /// The pinned relying party id; nil when the profile has none yet.
    package let rpId: String?
    /// Where `rpId` came from, for messages.
    package let origin: String

    package init(settings: Settings) {
        profile = settings.profile
        configFile = settings.configFile
        if let pinned = settings.passkeyRpId {
            rpId = pinned
            origin = "passkey_rp_id in [profiles.\(settings.profile)] of \(settings.configFile)"
        } else if let host = settings.domain.flatMap(Self.host(ofDomain:)) {
            rpId = host
            origin = "the profile's managed-login domain"
        } else {
            rpId = nil
            origin = ""
        }
    }

    /// For a sign-in's assertion: `asked` must be the pinned relying party.
    package func checkSignIn(_ asked: String) throws -> String {
        guard let rpId else {
            throw AuthctlError(
                .configuration,
                """
                the service asks the security key to sign for the relying party \(OutsideText(asked)), and profile \(profile) \
                has no relying party pinned for its passkeys: nothing was sent to the key. Run `authctl passkey add` once \
                (it records it), or set passkey_rp_id = "<your pool's passkey domain>" in [profiles.\(profile)] of \(configFile); \
                or sign in with `authctl signin --browser`, where the browser does passkeys itself
                """)
        }
        return try check(asked, against: rpId)
    }

    /// For `passkey add`: the pinned relying party when there is one; else a host name, which the
    /// command records once the registration is complete.
    package func checkRegistration(_ asked: String) throws -> String {
        if let rpId { return try check(asked, against: rpId) }
        guard Self.isHostName(asked) else {
            throw AuthctlError(
                .configuration,
                "the service names a relying party that is no host name (\(OutsideText(asked))): nothing was registered"
            )
        }
        return asked
    }

    private func check(_ asked: String, against pinned: String) throws -> String {
        guard asked == pinned else {
            throw AuthctlError(
                .configuration,
                """
                the service asks the security key to sign for the relying party \(OutsideText(asked)), but profile \(profile)'s \
                passkeys are for \(OutsideText(pinned)) (\(origin)): refused, and nothing was sent to the key. An endpoint \
                that names another site is not your user pool (or the pool's passkey domain changed: then set passkey_rp_id)
                """)
        }
        return pinned
    }

    /// `auth.example.com` from `auth.example.com`, `https://auth.example.com/`.
    package static func host(ofDomain domain: String) -> String? {
        let text =
            domain.contains("://")
            ? URLComponents(string: domain)?.host : domain.split(separator: "/").first.map(String.init)
        guard let text, isHostName(text.lowercased()) else { return nil }
        return text.lowercased()
    }

    /// A DNS name as WebAuthn takes an rpId: labels of lowercase letters, digits and hyphens.
    package static func isHostName(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy {
                    (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "-")
                }
        }
    }
}

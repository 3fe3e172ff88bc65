#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The relying party a profile's passkeys are for. Whoever answers as the
/// service (a hostile endpoint, a relay) writes the WebAuthn options, rpId included, and the key
/// signs for any relying party it holds a resident passkey of: so the rpId is never taken from
/// the answer. It is the profile's `passkey_rp_id` (set by hand, or recorded by the first
/// `passkey add --rp-id`), else the host of its managed-login domain; any other rpId is refused
/// (exit 78) before the key is touched. `passkey add` with neither refuses before the first request
/// rather than trust the relying party the endpoint names.
package struct RelyingPartyPin {
    package let profile: String
    package let configFile: String
    /// The pinned relying party id; nil when the profile has none yet.
    package let rpId: String?
    /// Where `rpId` came from, for messages.
    package let origin: String
    /// Named by `passkey add --rp-id` on a profile with no `passkey_rp_id`: recorded once the
    /// registration is complete.
    package let recordsOnSuccess: Bool

    package init(settings: Settings) {
        profile = settings.profile
        configFile = settings.configFile
        recordsOnSuccess = false
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

    private init(settings: Settings, named: String) {
        profile = settings.profile
        configFile = settings.configFile
        rpId = named
        origin = "--rp-id"
        recordsOnSuccess = true
    }

    /// For `passkey add`, before anything is sent: the profile's pin, or the relying party named
    /// with `--rp-id` (a host name; where the profile has a pin, the same one). With neither the
    /// registration is refused: the options' rp.id is the endpoint's word, not the pool's.
    package static func forRegistration(settings: Settings, named: String?) throws -> RelyingPartyPin {
        let pin = RelyingPartyPin(settings: settings)
        guard let named else {
            guard pin.rpId != nil else {
                throw AuthctlError(
                    .configuration,
                    """
                    profile \(settings.profile) has no relying party pinned for its passkeys, and authctl does not take the \
                    one the endpoint names: nothing was sent. Name your pool's passkey relying party (its \
                    WebAuthnConfiguration's RelyingPartyId, by default the managed-login domain) once with \
                    `authctl passkey add --rp-id HOST`, which records it as passkey_rp_id in [profiles.\(settings.profile)] \
                    of \(settings.configFile)
                    """)
            }
            return pin
        }
        let host = named.lowercased()
        guard isHostName(host) else {
            throw AuthctlError(.usage, "--rp-id: give the relying party's host name (such as auth.example.com)")
        }
        if let pinned = pin.rpId {
            guard pinned == host else {
                throw AuthctlError(
                    .configuration,
                    "--rp-id \(host): profile \(settings.profile)'s passkeys are for \(pinned) (\(pin.origin)); nothing was sent. Change passkey_rp_id by hand if the pool's relying party changed"
                )
            }
            return pin
        }
        return RelyingPartyPin(settings: settings, named: host)
    }

    /// For a sign-in's assertion: `asked` must be the pinned relying party.
    package func checkSignIn(_ asked: String) throws -> String {
        guard let rpId else {
            throw AuthctlError(
                .configuration,
                """
                the service asks the security key to sign for the relying party \(UntrustedText(asked)), and profile \(profile) \
                has no relying party pinned for its passkeys: nothing was sent to the key. Run `authctl passkey add --rp-id HOST` \
                once (it records it), or set passkey_rp_id = "<your pool's passkey domain>" in [profiles.\(profile)] of \(configFile); \
                or sign in with `authctl signin --browser`, where the browser does passkeys itself
                """)
        }
        return try check(asked, against: rpId)
    }

    /// For `passkey add`: the creation options' rpId must be the pinned (or named) one.
    package func checkRegistration(_ asked: String) throws -> String {
        guard let rpId else {
            throw AuthctlError(
                .configuration,
                "the service names the relying party \(UntrustedText(asked)), and profile \(profile) has none pinned: nothing was registered (name it with --rp-id)"
            )
        }
        return try check(asked, against: rpId)
    }

    private func check(_ asked: String, against pinned: String) throws -> String {
        guard asked == pinned else {
            throw AuthctlError(
                .configuration,
                """
                the service asks the security key to sign for the relying party \(UntrustedText(asked)), but profile \(profile)'s \
                passkeys are for \(UntrustedText(pinned)) (\(origin)): refused, and nothing was sent to the key. An endpoint \
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

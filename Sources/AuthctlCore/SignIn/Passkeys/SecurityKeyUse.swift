import CognitoClient
import SecurityKey

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The one place authctl talks to a security key for a person: which key (named, or the one
/// attached), its PIN (asked without echo, or `--pin-fd`), "Touch your security key" before each
/// operation, and every failure as a message and an exit code. `passkey add` and the WEB_AUTHN
/// answerer both go through it.
package struct SecurityKeyUse {
    package let choice: SecurityKeyChoice
    package let console: Console
    package let environment: [String: String]
    /// The only relying party the key is asked to sign for.
    package let relyingParty: RelyingPartyPin
    /// Why a sign-in needs the key to verify the user whatever the service's options say (passkey
    /// MFA turned on for the profile: a passkey counts as MFA only with verification); nil: as asked.
    package let verificationNeededBecause: String?

    /// The key to use, settled before anything is asked of the service: libfido2 loads, and the key
    /// named (or attached, or touched of several) opens. Its path goes to `register`.
    package func device() throws -> String {
        let path = try devicePath()
        do {
            _ = try SecurityKey(path: path, timeoutMs: 10_000)
        } catch let error as SecurityKeyError {
            throw failure(error, path: path)
        }
        return path
    }

    /// makeCredential for the service's creation options (the clientDataJSON written here) on the
    /// key at `device` (from `device()`).
    package func register(_ options: WebAuthnCreationOptions, device: String) throws -> WebAuthnRegistration {
        guard let asked = options.rpId, !asked.isEmpty else {
            throw AuthctlError(.unavailable, "Cognito's passkey options name no relying party (rp.id)")
        }
        let rpId = try relyingParty.checkRegistration(asked)
        guard let userId = Base64URL.decode(options.user.id) else {
            throw AuthctlError(.unavailable, "Cognito's passkey options carry a user id that is not base64url")
        }
        guard let algorithm = options.algorithm(among: WebAuthnAlgorithm.supported) else {
            let offered = (options.pubKeyCredParams ?? []).map { String($0.alg) }.joined(separator: ", ")
            throw AuthctlError(
                .unavailable,
                "Cognito offers no key algorithm authctl can register (offered: \(offered); authctl: ES256 -7, EdDSA -8)"
            )
        }
        let clientData = WebAuthnClientData(.create, challenge: options.challenge, rpId: rpId)
        let exclude = (options.excludeCredentials ?? []).compactMap(\.rawId)
        // A CTAP 2.0 key with a PIN set makes no credential without it, whatever the pool asks.
        let made = try withKey(
            device: device, timeout: options.timeout,
            verification: options.authenticatorSelection?.userVerification,
            pinWheneverSet: true, purpose: "to register a passkey for \(rpId)"
        ) { key, pin, uv in
            try key.makeCredential(
                clientDataHash: clientData.hash, rpId: rpId, rpName: options.rp.name ?? rpId,
                userId: [UInt8](userId), userName: options.user.name,
                userDisplayName: options.user.displayName ?? options.user.name, algorithm: algorithm,
                residentKey: options.wantsResidentKey ? .yes : .omit, userVerification: uv,
                exclude: exclude, pin: pin)
        }
        return WebAuthnRegistration(
            credentialId: made.id, clientData: clientData, authenticatorData: made.authenticatorData,
            attestationFormat: made.format, attestationStatement: made.attestationStatement,
            algorithm: made.algorithm,
            publicKeyDER: WebAuthnAlgorithm.subjectPublicKeyInfo(algorithm: made.algorithm, key: made.publicKey),
            transports: ["usb"])
    }

    /// getAssertion for WEB_AUTHN's request options.
    package func authenticate(_ options: WebAuthnRequestOptions) throws -> WebAuthnAssertion {
        guard let asked = options.rpId, !asked.isEmpty else {
            throw AuthctlError(.unavailable, "Cognito's WEB_AUTHN challenge names no relying party (rpId)")
        }
        let rpId = try relyingParty.checkSignIn(asked)
        let clientData = WebAuthnClientData(.get, challenge: options.challenge, rpId: rpId)
        let allow = (options.allowCredentials ?? []).compactMap(\.rawId)
        let signed = try withKey(
            timeout: options.timeout, verification: verificationNeededBecause == nil ? options.userVerification : nil,
            neededBecause: verificationNeededBecause,
            purpose: "to sign in to \(rpId)"
        ) { key, pin, uv in
            try key.getAssertion(
                clientDataHash: clientData.hash, rpId: rpId, allow: allow, userVerification: uv, pin: pin)
        }
        return WebAuthnAssertion(
            credentialId: signed.credentialId, clientData: clientData,
            authenticatorData: signed.authenticatorData, signature: signed.signature,
            userHandle: signed.userHandle)
    }

    /// Opens the key, settles user verification (PIN, the key's own, or none) and runs `body`
    /// after the touch prompt; key failures become `AuthctlError`s.
    /// `neededBecause`: verification is required, and this says why (else `verification`, the
    /// service's userVerification, decides).
    private func withKey<T>(
        device: String? = nil, timeout: Double?, verification: String?, neededBecause: String? = nil,
        pinWheneverSet: Bool = false, purpose: String, _ body: (SecurityKey, String?, FidoOption) throws -> T
    ) throws -> T {
        let path = try device ?? devicePath()
        // The service's timeout (ms), within 10 s .. 5 min.
        let wait = Int32(min(max(timeout ?? 120_000, 10_000), 300_000))
        do {
            let key = try SecurityKey(path: path, timeoutMs: wait)
            let wanted = neededBecause != nil ? "required" : verification ?? "preferred"
            var pin: String?
            var uv = FidoOption.omit
            if wanted != "discouraged" || (pinWheneverSet && key.hasPIN) {
                if key.hasPIN {
                    pin = try readPIN()
                } else if key.hasBuiltInVerification {
                    uv = .yes
                } else if wanted == "required" {
                    let why =
                        neededBecause
                        ?? "the user pool requires user verification (its passkeys may count as MFA only with it: MULTI_FACTOR_WITH_USER_VERIFICATION, or the user turned passkey MFA on)"
                    throw AuthctlError(
                        .configuration,
                        "\(why), and the security key at \(path) has no PIN set and no built-in verification: set a PIN (for example `fido2-token -S \(path)`) and try again, or sign in another way; nothing was signed"
                    )
                }
            }
            // A PIN typed on the terminal may be retyped while the key allows (three times at most).
            var typings = 1
            while true {
                console.message("Touch your security key \(purpose).")
                do {
                    return try body(key, pin, uv)
                } catch let error as SecurityKeyError
                    where error.kind == .pinInvalid && pin != nil && choice.pinFD == nil && typings < 3
                    && (error.retriesLeft ?? 1) > 0
                {
                    typings += 1
                    let left = error.retriesLeft.map { " (\($0) \($0 == 1 ? "try" : "tries") left)" } ?? ""
                    console.message("Wrong PIN\(left).")
                    pin = try readPIN()
                }
            }
        } catch let error as SecurityKeyError {
            throw failure(error, path: path)
        }
    }

    /// The key named (`--fido-device`, AUTHCTL_FIDO_DEVICE) or the only one attached; of several,
    /// the one the person touches.
    private func devicePath() throws -> String {
        var candidates = choice.devicePaths
        // A path that is not there is said as such (libfido2 would answer FIDO_ERR_INTERNAL).
        for named in candidates {
            let file = named.hasPrefix("unix:") ? String(named.dropFirst("unix:".count)) : named
            if !FileManager.default.fileExists(atPath: file) {
                throw AuthctlError(
                    .unavailable,
                    "no such device: \(UntrustedText(named)) (from --fido-device or AUTHCTL_FIDO_DEVICE); attached keys are /dev/hidrawN"
                )
            }
        }
        if candidates.isEmpty {
            do {
                candidates = try SecurityKey.attached()
            } catch let error as SecurityKeyError {
                throw failure(error, path: nil)
            }
            if candidates.isEmpty { throw noKey() }
        }
        if candidates.count == 1 { return candidates[0] }
        console.message(
            "Several security keys (\(candidates.joined(separator: ", "))): touch the one to use, or name it with --fido-device PATH."
        )
        do {
            let path = try SecurityKey.touched(among: candidates, timeoutMs: 30_000)
            console.message("Using the security key at \(path).")
            return path
        } catch let error as SecurityKeyError {
            throw failure(error, path: nil)
        }
    }

    private func noKey() -> AuthctlError {
        let hidraw =
            (try? FileManager.default.contentsOfDirectory(atPath: "/dev"))?.filter { $0.hasPrefix("hidraw") } ?? []
        let unreadable = hidraw.filter { !FileManager.default.isReadableFile(atPath: "/dev/" + $0) }.map {
            "/dev/" + $0
        }
        return Self.noKey(unreadable: unreadable, environment: environment)
    }

    /// "No key", with the udev rule when hidraw devices exist that this user cannot open, and the
    /// browser over SSH.
    package static func noKey(unreadable: [String], environment: [String: String]) -> AuthctlError {
        var text = "no security key found for the passkey"
        if !unreadable.isEmpty {
            text +=
                "; \(unreadable.sorted().joined(separator: ", ")) cannot be opened by this user: add a udev rule such as "
                + #"KERNEL=="hidraw*", SUBSYSTEM=="hidraw", MODE="0660", GROUP="plugdev", TAG+="uaccess" in /etc/udev/rules.d/70-fido.rules (Debian's libu2f-udev package installs one for known keys), then reconnect the key"#
        }
        if environment["SSH_CONNECTION"] != nil || environment["SSH_TTY"] != nil {
            text +=
                "; over SSH the key must be attached to this machine (or forwarded with --fido-device unix:PATH): or sign in with `authctl signin --browser`, whose managed login does passkeys in your local browser"
        } else {
            text += ": insert one, name it with --fido-device PATH, or sign in with `authctl signin --browser`"
        }
        return AuthctlError(.unavailable, text)
    }

    /// The PIN: the first line of `--pin-fd`, or asked on the terminal without echo.
    private func readPIN() throws -> String {
        if let fd = choice.pinFD {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while bytes.count < 256, read(fd, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
            guard !bytes.isEmpty else { throw AuthctlError(.usage, "--pin-fd \(fd): no PIN could be read from it") }
            return String(decoding: bytes, as: UTF8.self)
        }
        guard console.canPrompt else {
            throw AuthctlError(
                .usage, "the security key has a PIN and there is no terminal to ask for it: give it with --pin-fd N")
        }
        guard let pin = console.prompt("PIN for your security key: ", secret: true), !pin.isEmpty else {
            throw AuthctlError(.usage, "no PIN given")
        }
        return pin
    }

    private func failure(_ error: SecurityKeyError, path: String?) -> AuthctlError {
        let at = path.map { " (\($0))" } ?? ""
        switch error.kind {
        case .libraryUnavailable:
            return AuthctlError(.configuration, "security keys need libfido2: \(error.message)")
        case .noDevice:
            return path == nil
                ? noKey() : AuthctlError(.unavailable, "cannot open the security key\(at): \(error.message)")
        case .pinInvalid:
            let left =
                error.retriesLeft.map { "; \($0) \($0 == 1 ? "try" : "tries") left before the key blocks its PIN" }
                ?? ""
            return AuthctlError(.notAuthorized, "wrong PIN for the security key\(left)")
        case .pinBlocked:
            return AuthctlError(
                .notAuthorized,
                "the security key's PIN is blocked (too many wrong PINs): remove and reinsert the key, or reset it, which deletes its passkeys"
            )
        case .pinRequired:
            return AuthctlError(
                .notAuthorized,
                "the security key asks for a PIN, and it has none set or none was given: \(error.message)")
        case .userVerificationBlocked:
            return AuthctlError(
                .notAuthorized, "the security key's built-in verification is blocked: use its PIN or reset it")
        case .timeout:
            return AuthctlError(
                .throttled,
                "no touch: the security key\(at) timed out waiting; run the command again and touch the key when asked")
        case .denied:
            return AuthctlError(
                .notAuthorized, "the security key\(at) refused (the touch was declined or the operation denied)")
        case .credentialExcluded:
            return AuthctlError(
                .inputRejected,
                "this security key\(at) already holds a passkey of this account: nothing was registered (see `authctl passkey list`)"
            )
        case .noCredentials:
            return AuthctlError(
                .notAuthorized,
                "this security key\(at) holds no passkey of this account: use the key you registered, or sign in another way and run `authctl passkey add`"
            )
        case .untrustedSocket:
            return AuthctlError(
                .configuration,
                "\(error.message): refused before anything was sent to it (the PIN protocol would have gone to whoever serves it); use a socket of your own in a directory only you can write"
            )
        case .unsupportedAlgorithm:
            return AuthctlError(
                .unavailable, "the security key\(at) supports none of the algorithms Cognito offers: \(error.message)")
        case .other:
            return AuthctlError(.unavailable, "security key\(at): \(error.message)")
        }
    }

    package init(
        choice: SecurityKeyChoice, console: Console, environment: [String: String], relyingParty: RelyingPartyPin,
        verificationNeededBecause: String? = nil
    ) {
        self.choice = choice
        self.console = console
        self.environment = environment
        self.relyingParty = relyingParty
        self.verificationNeededBecause = verificationNeededBecause
    }
}

import CFido2

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Why a security-key operation failed, decided once from libfido2's status.
public struct SecurityKeyError: Error, CustomStringConvertible, Equatable {
    public enum Kind: Sendable, Equatable {
        /// libfido2 itself could not be loaded (libfido2-1 missing).
        case libraryUnavailable
        /// No key attached, or the named device cannot be opened.
        case noDevice
        case pinInvalid
        case pinBlocked
        case pinRequired
        case userVerificationBlocked
        /// No touch within the time allowed.
        case timeout
        /// The key (or the person, at the key) refused.
        case denied
        /// makeCredential: the key already holds one of the excluded credentials.
        case credentialExcluded
        /// getAssertion: the key holds none of the credentials allowed.
        case noCredentials
        /// The algorithms offered are not ones the key (or authctl) supports.
        case unsupportedAlgorithm
        /// A `unix:` socket served by another user, or in a directory others can write: refused
        /// before a byte was sent.
        case untrustedSocket
        case other
    }

    public var kind: Kind
    /// libfido2's status, when the failure is one.
    public var status: Int32?
    public var message: String
    /// PIN retries left, after a wrong PIN (when the key says).
    public var retriesLeft: Int?

    public init(_ kind: Kind, status: Int32? = nil, _ message: String, retriesLeft: Int? = nil) {
        self.kind = kind
        self.status = status
        self.message = message
        self.retriesLeft = retriesLeft
    }

    public var description: String { message }

    static func from(status: Int32, doing what: String) -> SecurityKeyError {
        let text = String(cString: authctl_fido_strerr(status))
        let kind: Kind
        switch status {
        case AUTHCTL_FIDO_LOAD_FAILED:
            return SecurityKeyError(.libraryUnavailable, String(cString: authctl_fido_load_error()))
        case AUTHCTL_FIDO_SOCKET_FOREIGN_PEER:
            return SecurityKeyError(.untrustedSocket, status: status, "\(what): the socket is served by another user")
        case AUTHCTL_FIDO_SOCKET_OPEN_DIRECTORY:
            return SecurityKeyError(
                .untrustedSocket, status: status,
                "\(what): the socket is in a directory another user owns or others can write")
        case AUTHCTL_FIDO_ERR_PIN_INVALID: kind = .pinInvalid
        case AUTHCTL_FIDO_ERR_PIN_BLOCKED, AUTHCTL_FIDO_ERR_PIN_AUTH_BLOCKED: kind = .pinBlocked
        case AUTHCTL_FIDO_ERR_PIN_REQUIRED, AUTHCTL_FIDO_ERR_PIN_NOT_SET: kind = .pinRequired
        case AUTHCTL_FIDO_ERR_UV_BLOCKED: kind = .userVerificationBlocked
        // No answer in the time allowed (libfido2 reports its own wait running out as a failed read).
        case AUTHCTL_FIDO_ERR_ACTION_TIMEOUT, AUTHCTL_FIDO_ERR_USER_ACTION_TIMEOUT, AUTHCTL_FIDO_ERR_RX: kind = .timeout
        case AUTHCTL_FIDO_ERR_OPERATION_DENIED, AUTHCTL_FIDO_ERR_KEEPALIVE_CANCEL: kind = .denied
        case AUTHCTL_FIDO_ERR_CREDENTIAL_EXCLUDED: kind = .credentialExcluded
        case AUTHCTL_FIDO_ERR_NO_CREDENTIALS: kind = .noCredentials
        case AUTHCTL_FIDO_ERR_UNSUPPORTED_ALGORITHM: kind = .unsupportedAlgorithm
        default: kind = .other
        }
        return SecurityKeyError(kind, status: status, "\(what): \(text)")
    }
}

/// A user-verification request as libfido2 takes it.
public enum FidoOption: Int32, Sendable {
    case omit = 0
    case no = 1
    case yes = 2
}

/// What makeCredential made.
public struct MadeCredential: Sendable, Equatable {
    public var id: [UInt8]
    /// The authenticator data, raw.
    public var authenticatorData: [UInt8]
    /// The attestation statement's format and its CBOR map, as the key sent it.
    public var format: String
    public var attestationStatement: [UInt8]
    /// The COSE algorithm and the public key in libfido2's form (ES256: x‖y; EdDSA: the 32 bytes).
    public var algorithm: Int
    public var publicKey: [UInt8]
}

/// What getAssertion returned (the first assertion).
public struct Assertion: Sendable, Equatable {
    public var credentialId: [UInt8]
    /// Raw authenticator data (libfido2's CBOR byte string unwrapped).
    public var authenticatorData: [UInt8]
    public var signature: [UInt8]
    public var userHandle: [UInt8]
}

/// One FIDO2 device, opened for one operation (libfido2 through CFido2, loaded on first use).
public final class SecurityKey {
    private let handle: UnsafeMutableRawPointer
    public let path: String

    /// The hidraw paths of the keys attached.
    public static func attached() throws -> [String] {
        var buffer = [CChar](repeating: 0, count: 4096)
        var count = 0
        let status = authctl_fido_list_devices(&buffer, buffer.count, &count)
        guard status == AUTHCTL_FIDO_OK else {
            throw SecurityKeyError.from(status: status, doing: "listing security keys")
        }
        let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return text.split(separator: "\n").map(String.init)
    }

    /// Opens `path` (hidraw, or `unix:PATH`); `timeoutMs` bounds the wait for a touch.
    public init(path: String, timeoutMs: Int32) throws {
        var device: UnsafeMutableRawPointer?
        let status = authctl_fido_open(path, timeoutMs, &device)
        guard status == AUTHCTL_FIDO_OK, let device else {
            var error = SecurityKeyError.from(status: status, doing: "cannot open the security key \(path)")
            if error.kind == .other { error.kind = .noDevice }
            throw error
        }
        handle = device
        self.path = path
    }

    deinit { authctl_fido_close(handle) }

    /// The one of `paths` the person touches within `timeoutMs` (the others are cancelled). Keys
    /// that cannot be opened are left out; none left: `noDevice`.
    public static func touched(among paths: [String], timeoutMs: Int32) throws -> String {
        var keys: [SecurityKey] = []
        for path in paths {
            guard let key = try? SecurityKey(path: path, timeoutMs: timeoutMs),
                authctl_fido_touch_begin(key.handle) == AUTHCTL_FIDO_OK
            else { continue }
            keys.append(key)
        }
        guard !keys.isEmpty else {
            throw SecurityKeyError(
                .noDevice, "none of the security keys \(paths.joined(separator: ", ")) could be opened")
        }
        defer { for key in keys { _ = authctl_fido_cancel(key.handle) } }
        var waited: Int32 = 0
        while waited < timeoutMs {
            for key in keys {
                var touched: Int32 = 0
                if authctl_fido_touch_status(key.handle, &touched, 50) == AUTHCTL_FIDO_OK, touched != 0 {
                    return key.path
                }
                waited += 50
            }
        }
        throw SecurityKeyError(.timeout, "none of the security keys was touched in time")
    }

    public var hasPIN: Bool { authctl_fido_has_pin(handle) }
    public var hasBuiltInVerification: Bool { authctl_fido_has_uv(handle) }

    public func pinRetries() -> Int? {
        var retries: Int32 = 0
        return authctl_fido_retry_count(handle, &retries) == AUTHCTL_FIDO_OK ? Int(retries) : nil
    }

    public func makeCredential(
        clientDataHash: [UInt8], rpId: String, rpName: String, userId: [UInt8], userName: String,
        userDisplayName: String, algorithm: Int, residentKey: FidoOption,
        userVerification: FidoOption, exclude: [[UInt8]], pin: String?
    ) throws -> MadeCredential {
        guard let cred = authctl_fido_cred_new() else {
            throw SecurityKeyError(.other, "libfido2 could not allocate a credential")
        }
        defer { authctl_fido_cred_free(cred) }
        for id in exclude { _ = authctl_fido_cred_exclude(cred, id, id.count) }
        let status: Int32 = clientDataHash.withUnsafeBufferPointer { hash in
            userId.withUnsafeBufferPointer { user in
                rpId.withCString { rp in
                    rpName.withCString { rpn in
                        userName.withCString { un in
                            userDisplayName.withCString { dn in
                                withOptionalCString(pin) { pinText in
                                    var args = authctl_fido_make_args(
                                        client_data_hash: hash.baseAddress, client_data_hash_len: hash.count, rp_id: rp,
                                        rp_name: rpn,
                                        user_id: user.baseAddress, user_id_len: user.count, user_name: un,
                                        user_display_name: dn,
                                        cose_algorithm: Int32(algorithm), resident_key: residentKey.rawValue,
                                        user_verification: userVerification.rawValue, pin: pinText)
                                    return authctl_fido_make_credential(handle, cred, &args)
                                }
                            }
                        }
                    }
                }
            }
        }
        guard status == AUTHCTL_FIDO_OK else { throw failure(status, doing: "the security key did not make a passkey") }
        var length = 0
        let id = bytes(authctl_fido_cred_id(cred, &length), length)
        let authData = bytes(authctl_fido_cred_authdata_raw(cred, &length), length)
        let statement = bytes(authctl_fido_cred_attstmt(cred, &length), length)
        let publicKey = bytes(authctl_fido_cred_pubkey(cred, &length), length)
        let format = authctl_fido_cred_fmt(cred).map { String(cString: $0) } ?? "none"
        return MadeCredential(
            id: id, authenticatorData: authData, format: format, attestationStatement: statement,
            algorithm: Int(authctl_fido_cred_type(cred)), publicKey: publicKey)
    }

    public func getAssertion(
        clientDataHash: [UInt8], rpId: String, allow: [[UInt8]], userVerification: FidoOption,
        pin: String?
    ) throws -> Assertion {
        guard let assertion = authctl_fido_assert_new() else {
            throw SecurityKeyError(.other, "libfido2 could not allocate an assertion")
        }
        defer { authctl_fido_assert_free(assertion) }
        for id in allow { _ = authctl_fido_assert_allow(assertion, id, id.count) }
        let status: Int32 = clientDataHash.withUnsafeBufferPointer { hash in
            rpId.withCString { rp in
                withOptionalCString(pin) { pinText in
                    var args = authctl_fido_assert_args(
                        client_data_hash: hash.baseAddress, client_data_hash_len: hash.count,
                        rp_id: rp, user_verification: userVerification.rawValue, pin: pinText)
                    return authctl_fido_get_assertion(handle, assertion, &args)
                }
            }
        }
        guard status == AUTHCTL_FIDO_OK else { throw failure(status, doing: "the security key did not sign in") }
        guard authctl_fido_assert_count(assertion) > 0 else {
            throw SecurityKeyError(.noCredentials, "the security key returned no assertion")
        }
        var length = 0
        let id = bytes(authctl_fido_assert_id(assertion, 0, &length), length)
        let wrapped = bytes(authctl_fido_assert_authdata_cbor(assertion, 0, &length), length)
        guard let authData = CBORByteString.unwrap(wrapped) else {
            throw SecurityKeyError(.other, "the security key's authenticator data is not a CBOR byte string")
        }
        let signature = bytes(authctl_fido_assert_sig(assertion, 0, &length), length)
        let user = bytes(authctl_fido_assert_user_id(assertion, 0, &length), length)
        return Assertion(credentialId: id, authenticatorData: authData, signature: signature, userHandle: user)
    }

    private func failure(_ status: Int32, doing what: String) -> SecurityKeyError {
        var error = SecurityKeyError.from(status: status, doing: what)
        if error.kind == .pinInvalid { error.retriesLeft = pinRetries() }
        return error
    }
}

private func bytes(_ pointer: UnsafePointer<UInt8>?, _ length: Int) -> [UInt8] {
    guard let pointer, length > 0 else { return [] }
    return Array(UnsafeBufferPointer(start: pointer, count: length))
}

private func withOptionalCString<T>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let text else { return body(nil) }
    return text.withCString { body($0) }
}

/// The one piece of CBOR this library reads: a definite-length byte string (major type 2), as
/// libfido2 1.12 hands out an assertion's authenticator data.
public enum CBORByteString {
    public static func unwrap(_ data: [UInt8]) -> [UInt8]? {
        guard let first = data.first, first >> 5 == 2 else { return nil }
        let info = first & 0x1f
        var length = 0
        var start = 1
        switch info {
        case 0..<24: length = Int(info)
        case 24, 25, 26, 27:
            let size = 1 << Int(info - 24)
            guard data.count >= 1 + size else { return nil }
            for byte in data[1..<(1 + size)] {
                guard length <= Int.max >> 8 else { return nil }
                length = length << 8 | Int(byte)
            }
            start = 1 + size
        default: return nil
        }
        guard data.count == start + length else { return nil }
        return Array(data[start...])
    }
}

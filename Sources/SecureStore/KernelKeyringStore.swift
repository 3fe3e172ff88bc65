import CKeyutils
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// What the kernel-keyring store promises about how long its items last (for `status`).
public enum KernelKeyringPersistence: Sendable, Equatable {
    /// In the user's persistent keyring: kernel memory, lost at reboot, and removed by the kernel
    /// after `expirySeconds` without use (`/proc/sys/kernel/keys/persistent_keyring_expiry`;
    /// nil when that file cannot be read). Every use of the store restarts the timer.
    case persistent(expirySeconds: Int?)
    /// In the user keyring (the kernel has no persistent keyrings): kernel memory, lost at
    /// reboot, and removed when the user's last process (e.g. the last login session) ends.
    case userKeyring
}

/// `SecretStore` in the Linux kernel's key retention service (keyctl), for hosts without a
/// Secret Service: SSH servers, CI runners.
///
/// - Items live in the user's persistent keyring (linked into the process keyring), or in the
///   user keyring where the kernel has no persistent keyrings. Nothing is written to disk.
/// - One `user` key per item, described `authctl:<namespace>:<kind>:<profile>` (each part
///   percent-escaped, so the description is unambiguous); the payload is the item as JSON
///   (`StoredItem`: pool and client ids, label, secret). One key per kind + profile means a write
///   is a single add_key, which replaces the payload of an existing key atomically.
/// - The namespace (the CLI passes a hash of its configuration directory) keeps the items of two
///   HOMEs of one user apart. It is a prefix of each description rather than a keyring of its
///   own: creating a keyring is not atomic (a second add_key of the same keyring displaces the
///   first with an empty one, losing what a concurrent writer had put in it).
/// - Permissions: possessor and user everything, group and other nothing.
/// - Never prints, never exits, never puts the secret in an error message.
public final class KernelKeyringStore: SecretStore, Sendable {
    /// The largest payload of a `user` key (the kernel's limit).
    public static let maximumPayloadBytes = 32767

    /// `KEY_POS_ALL | KEY_USR_ALL`: possessor and owning user may do everything, group and
    /// other nothing.
    static let permissions: UInt32 = 0x3f3f_0000

    public let namespace: String
    private let expiryPath: String
    private let resolved = Mutex<Keyring?>(nil)

    private struct Keyring {
        var id: Int32
        var persistent: Bool
    }

    /// - Parameters:
    ///   - namespace: separates the items of different configurations of the same user (the
    ///     CLI passes a hash of its configuration directory). Any non-empty string.
    ///   - expiryPath: where the persistent keyring's idle expiry is read (tests only).
    public init(namespace: String, expiryPath: String = "/proc/sys/kernel/keys/persistent_keyring_expiry") {
        self.namespace = namespace
        self.expiryPath = expiryPath
    }

    /// Where items are kept and for how long. Throws `.blocked` when keyctl is refused.
    public var persistence: KernelKeyringPersistence {
        get throws {
            guard try keyring().persistent else { return .userKeyring }
            return .persistent(expirySeconds: Self.readExpiry(expiryPath))
        }
    }

    public func read(_ key: SecretKey) throws -> String? {
        let ring = try keyring()
        guard let id = try search(description(kind: key.kind, profile: key.profile), in: ring) else { return nil }
        guard let item = try item(id) else { return nil }
        return item.secret(for: key)
    }

    public func write(_ key: SecretKey, label: String, secret: String) throws {
        let ring = try keyring()
        var payload = try StoredItem.encoder().encode(StoredItem(key: key, label: label, secret: secret))
        defer { payload.resetBytes(in: 0..<payload.count) }
        guard payload.count <= Self.maximumPayloadBytes else {
            throw SecureStoreError(
                .tooLarge,
                message:
                    "the \(key.kind) of profile \(key.profile) is \(payload.count) bytes stored, more than a "
                    + "kernel key holds (\(Self.maximumPayloadBytes)); use the file store")
        }
        let description = description(kind: key.kind, profile: key.profile)
        let id = payload.withUnsafeBytes { bytes in
            authctl_add_key("user", description, bytes.baseAddress, bytes.count, ring.id)
        }
        guard id >= 0 else { throw Self.failure("add_key", errno: Int32(-id)) }
        let set = authctl_keyctl_setperm(Int32(id), Self.permissions)
        guard set >= 0 else { throw Self.failure("KEYCTL_SETPERM", errno: Int32(-set)) }
    }

    @discardableResult
    public func delete(_ key: SecretKey) throws -> Bool {
        let ring = try keyring()
        guard let id = try search(description(kind: key.kind, profile: key.profile), in: ring) else { return false }
        let result = authctl_keyctl_unlink(id, ring.id)
        if result == -Int(ENOENT) || result == -Int(ENOKEY) { return false }
        guard result >= 0 else { throw Self.failure("KEYCTL_UNLINK", errno: Int32(-result)) }
        return true
    }

    public func keys(profile: String) throws -> [SecretKey] {
        let ring = try keyring()
        let prefix = description(kind: nil, profile: nil)
        var keys: [SecretKey] = []
        for id in try linkedKeys(ring.id) {
            // A key of another program, or one removed since the keyring was read, is skipped.
            guard let described = describe(id), described.type == "user",
                described.description.hasPrefix(prefix),
                let item = try? item(id), item.profile == profile,
                described.description == description(kind: item.kind, profile: item.profile)
            else { continue }
            keys.append(item.key)
        }
        return keys.sorted { $0.kind < $1.kind }
    }

    // MARK: - Descriptions

    /// `authctl:<namespace>:<kind>:<profile>`; with kind nil, the prefix shared by the namespace.
    func description(kind: String?, profile: String?) -> String {
        var parts = ["authctl", Self.escape(namespace)]
        if let kind { parts.append(Self.escape(kind)) }
        if let profile { parts.append(Self.escape(profile)) }
        return parts.joined(separator: ":") + (kind == nil ? ":" : "")
    }

    /// Percent-escapes `%`, `:`, `;` and every byte outside printable ASCII, so parts never run
    /// into each other (`;` also separates KEYCTL_DESCRIBE's fields).
    static func escape(_ part: String) -> String {
        part.utf8.map { byte in
            let plain =
                byte >= 0x20 && byte < 0x7f && byte != UInt8(ascii: "%")
                && byte != UInt8(ascii: ":") && byte != UInt8(ascii: ";")
            return plain
                ? String(Unicode.Scalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
        }.joined()
    }

    // MARK: - System calls

    /// The keyring that holds the items, found once per store.
    private func keyring() throws -> Keyring {
        try resolved.withLock { cached in
            if let cached { return cached }
            let ring = try Self.findKeyring()
            cached = ring
            return ring
        }
    }

    private static func findKeyring() throws -> Keyring {
        // Linking the persistent keyring into the process keyring gives this process possession
        // of it (and restarts its expiry timer).
        let persistent = authctl_keyctl_get_persistent(-1, Int32(AUTHCTL_KEY_SPEC_PROCESS_KEYRING))
        if persistent >= 0 { return Keyring(id: Int32(persistent), persistent: true) }
        let error = Int32(-persistent)
        if error == EPERM || error == ENOSYS { throw blocked(errno: error) }
        // EOPNOTSUPP: a kernel without CONFIG_PERSISTENT_KEYRINGS; fall back to the user keyring.
        let user = authctl_keyctl_get_keyring_id(Int32(AUTHCTL_KEY_SPEC_USER_KEYRING), 1)
        if user >= 0 { return Keyring(id: Int32(user), persistent: false) }
        let userError = Int32(-user)
        if userError == EPERM || userError == ENOSYS { throw blocked(errno: userError) }
        throw SecureStoreError(
            kind: .unavailable,
            message:
                "the kernel keyring cannot be used: the persistent keyring is unavailable "
                + "(KEYCTL_GET_PERSISTENT: \(errorText(error))) and so is the user keyring (\(errorText(userError))); "
                + "use the file store (--store file)")
    }

    static func blocked(errno: Int32) -> SecureStoreError {
        SecureStoreError(
            .blocked,
            message:
                "keyctl is blocked on this host (\(errorText(errno))), e.g. by a container's seccomp "
                + "profile such as Docker's default; use the file store (--store file), or allow keyctl, "
                + "add_key and request_key in the container's seccomp profile")
    }

    private func search(_ description: String, in ring: Keyring) throws -> Int32? {
        let id = authctl_keyctl_search(ring.id, "user", description)
        if id >= 0 { return Int32(id) }
        let error = Int32(-id)
        // Not there, or there but expired or revoked (a stale key is as good as none).
        if error == ENOKEY || error == EKEYEXPIRED || error == EKEYREVOKED { return nil }
        throw Self.failure("KEYCTL_SEARCH", errno: error)
    }

    /// The item in key `id`, nil when the key went away meanwhile or is not an item.
    private func item(_ id: Int32) throws -> StoredItem? {
        var buffer = [UInt8](repeating: 0, count: Self.maximumPayloadBytes + 1)
        defer { buffer.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        let length = buffer.withUnsafeMutableBytes { authctl_keyctl_read(id, $0.baseAddress, $0.count) }
        if length < 0 {
            let error = Int32(-length)
            if error == ENOKEY || error == EKEYEXPIRED || error == EKEYREVOKED { return nil }
            throw Self.failure("KEYCTL_READ", errno: error)
        }
        guard length <= buffer.count else { return nil }
        guard let item = try? JSONDecoder().decode(StoredItem.self, from: Data(buffer[0..<Int(length)])) else {
            throw SecureStoreError(.corrupted, message: "kernel key \(id) is not an authctl item")
        }
        return item
    }

    /// The ids of the keys linked into keyring `id`.
    private func linkedKeys(_ id: Int32) throws -> [Int32] {
        var capacity = 256
        while true {
            var ids = [Int32](repeating: 0, count: capacity)
            let length = ids.withUnsafeMutableBytes { authctl_keyctl_read(id, $0.baseAddress, $0.count) }
            guard length >= 0 else { throw Self.failure("KEYCTL_READ of the keyring", errno: Int32(-length)) }
            if length <= capacity * 4 { return Array(ids[0..<(Int(length) / 4)]) }
            capacity = Int(length) / 4 + 64  // keys were added meanwhile: read again, larger
        }
    }

    /// KEYCTL_DESCRIBE's "type;uid;gid;perm;description", nil when the key cannot be seen.
    private func describe(_ id: Int32) -> (type: String, description: String)? {
        var buffer = [CChar](repeating: 0, count: 4200)  // descriptions are at most 4095 bytes
        let length = buffer.withUnsafeMutableBufferPointer { authctl_keyctl_describe(id, $0.baseAddress, $0.count) }
        guard length > 0, length <= buffer.count else { return nil }
        let text = String(decoding: buffer[0..<(Int(length) - 1)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fields = text.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
        guard fields.count == 5 else { return nil }
        return (String(fields[0]), String(fields[4]))
    }

    static func failure(_ call: String, errno: Int32) -> SecureStoreError {
        if errno == EPERM || errno == ENOSYS { return blocked(errno: errno) }
        if errno == EDQUOT {
            return SecureStoreError(
                kind: .failed,
                message:
                    "the kernel keyring quota of this user is full (\(call): \(errorText(errno))); see "
                    + "/proc/sys/kernel/keys/maxbytes and maxkeys")
        }
        return SecureStoreError(kind: .failed, message: "the kernel keyring failed (\(call): \(errorText(errno)))")
    }

    static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }

    static func readExpiry(_ path: String) -> Int? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return Int(String(decoding: data, as: UTF8.self).trimmingWhitespace)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }

    fileprivate var trimmingWhitespace: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }) else { return "" }
        let last = lastIndex(where: { !isSpace($0) })!
        return self[first...last]
    }
}

import CLibSecret
import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `SecretStore` over the freedesktop Secret Service (gnome-keyring, KeePassXC, KWallet).
///
/// - Reads go first over a private D-Bus connection with an encrypted session
///   (`SecretServiceDirectRead`), which loads neither libsecret nor GLib; what it cannot read (a
///   locked item, another kind of bus address, an error answer) is read through libsecret.
///   Writes, deletions and listings go through libsecret.
/// - One item per `kind` + `profile`, in the default collection, with the schema
///   `io.github.authctl.Secret` and the attributes `kind`, `profile`, `user_pool_id`,
///   `client_id`. The secret is stored as `text/plain`.
/// - Talks to the D-Bus Secret Service only; libsecret's file backend
///   (`SECRET_BACKEND=file`, Flatpak, Snap) is never used, so nothing is written to a file.
/// - Every call is bounded by `timeout`: libsecret runs on a Dispatch worker thread, and when it
///   does not answer in time its `GCancellable` is cancelled and `.timeout` is thrown.
///   The caller never waits longer than `timeout` (plus thread start-up) per operation.
/// - Never prints, never exits, never puts the secret in an error message.
public final class SecretServiceStore: SecretStore, Sendable {
    /// Seconds one operation (read, write or delete) may take.
    public let timeout: Double
    private let environment: [String: String]
    private let direct: SecretServiceDirectRead?
    private let observer: SecretServiceObserver?

    /// - Parameters:
    ///   - timeout: seconds one operation may take before `.timeout` is thrown.
    ///   - environment: used only to decide whether a session bus can exist
    ///     (`DBUS_SESSION_BUS_ADDRESS`, or a socket at `$XDG_RUNTIME_DIR/bus`); when none
    ///     can, every call throws `.unavailable` without touching libsecret (which could
    ///     otherwise try to autolaunch a bus), and to find the bus for direct reads.
    ///     libsecret itself always connects with the process environment.
    ///   - directReads: reads go over a private D-Bus connection first (`SecretServiceDirectRead`)
    ///     and through libsecret only when that connection cannot answer. False: libsecret only.
    ///   - observer: told how each read was made (`--debug`).
    public init(
        timeout: Double = 5,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        directReads: Bool = true,
        observer: SecretServiceObserver? = nil
    ) {
        self.timeout = timeout
        self.environment = environment
        direct = directReads ? SecretServiceDirectRead(environment: environment) : nil
        self.observer = observer
    }

    public func read(_ key: SecretKey) throws -> String? {
        try requireSessionBus()
        var detour: SecretServiceDetour?
        if let direct {
            var attributes = [("kind", key.kind), ("profile", key.profile)]
            if !key.clientId.isEmpty { attributes.append(("client_id", key.clientId)) }
            let deadline = AgentSocket.milliseconds() + UInt64(min(max(timeout, 0), 86_400) * 1000)
            let outcome: SecretServiceDirectRead.Outcome
            do {
                outcome = try direct.lookup(attributes: attributes, schema: Self.schema, deadline: deadline)
            } catch {
                throw SecureStoreError(kind: .timeout, message: SecretServiceMessages.timeout(timeout))
            }
            switch outcome {
            case .found(var bytes):
                defer { bytes.wipe() }
                observer?(.read(direct: true, libsecretBecause: nil))
                return String(decoding: bytes, as: UTF8.self)
            case .absent:
                observer?(.read(direct: true, libsecretBecause: nil))
                return nil
            case .locked:
                detour = .locked
            case .declined(let failure):
                detour = SecretServiceDetour(failure)
            }
        }
        observer?(.read(direct: false, libsecretBecause: detour))
        let kind = key.kind
        let profile = key.profile
        let clientId: String? = key.clientId.isEmpty ? nil : key.clientId
        return try bounded { cancellable -> Result<String?, LibsecretFailure> in
            var error = AuthctlSecretError()
            defer { authctl_secret_error_clear(&error) }
            var length = 0
            guard let password = authctl_secret_lookup(kind, profile, clientId, &length, cancellable, &error) else {
                if let failure = LibsecretFailure(error) { return .failure(failure) }
                return .success(nil)
            }
            defer { authctl_secret_password_free(password) }
            let bytes = UnsafeRawBufferPointer(start: password, count: length)
            return .success(String(decoding: bytes, as: UTF8.self))
        }
    }

    public func write(_ key: SecretKey, label: String, secret: String) throws {
        try requireSessionBus()
        try bounded { cancellable -> Result<Void, LibsecretFailure> in
            var error = AuthctlSecretError()
            defer { authctl_secret_error_clear(&error) }
            // NUL-terminated UTF-8; the terminator is not part of the stored secret.
            var bytes = secret.utf8CString
            defer { bytes.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            let stored = bytes.withUnsafeBufferPointer { buffer in
                authctl_secret_store(
                    key.kind, key.profile, key.userPoolId, key.clientId, label,
                    buffer.baseAddress!, buffer.count - 1, cancellable, &error)
            }
            if stored == 0 {
                return .failure(LibsecretFailure(error) ?? .unknown)
            }
            // The Secret Service replaced any item with identical attributes; remove the
            // items of the same kind+profile for another pool or client, now that the new
            // one is safely stored.
            if authctl_secret_clear_others(
                key.kind, key.profile, key.userPoolId, key.clientId,
                cancellable, &error) < 0
            {
                return .failure(LibsecretFailure(error) ?? .unknown)
            }
            return .success(())
        }
    }

    @discardableResult
    public func delete(_ key: SecretKey) throws -> Bool {
        try requireSessionBus()
        let kind = key.kind
        let profile = key.profile
        return try bounded { cancellable -> Result<Bool, LibsecretFailure> in
            var error = AuthctlSecretError()
            defer { authctl_secret_error_clear(&error) }
            let removed = authctl_secret_clear(kind, profile, nil, nil, cancellable, &error)
            if removed < 0 { return .failure(LibsecretFailure(error) ?? .unknown) }
            return .success(removed > 0)
        }
    }

    public func keys(profile: String) throws -> [SecretKey] {
        try requireSessionBus()
        let keys = try bounded { cancellable -> Result<[SecretKey], LibsecretFailure> in
            var error = AuthctlSecretError()
            defer { authctl_secret_error_clear(&error) }
            var items: UnsafeMutablePointer<AuthctlSecretItemKey>?
            let count = authctl_secret_list(profile, &items, cancellable, &error)
            if count < 0 { return .failure(LibsecretFailure(error) ?? .unknown) }
            defer { authctl_secret_item_keys_free(items, count) }
            let found = UnsafeBufferPointer(start: items, count: Int(count)).compactMap { item -> SecretKey? in
                guard let kind = item.kind else { return nil }
                return SecretKey(
                    kind: String(cString: kind), profile: profile,
                    userPoolId: item.user_pool_id.map { String(cString: $0) } ?? "",
                    clientId: item.client_id.map { String(cString: $0) } ?? "")
            }
            return .success(found)
        }
        return keys.sorted { $0.kind < $1.kind }
    }

    /// The schema CLibSecret's items carry (libsecret stores it as the `xdg:schema` attribute).
    static let schema = "io.github.authctl.Secret"

    // MARK: - Session bus

    /// Whether a D-Bus session bus can exist for `environment`: `DBUS_SESSION_BUS_ADDRESS`
    /// is set, or `$XDG_RUNTIME_DIR/bus` is a socket.
    public static func sessionBusMayExist(environment: [String: String]) -> Bool {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return true }
        guard let runtimeDir = environment["XDG_RUNTIME_DIR"], !runtimeDir.isEmpty else { return false }
        var info = stat()
        guard stat(runtimeDir + "/bus", &info) == 0 else { return false }
        return (info.st_mode & S_IFMT) == S_IFSOCK
    }

    private func requireSessionBus() throws {
        guard Self.sessionBusMayExist(environment: environment) else {
            throw SecureStoreError(kind: .unavailable, message: SecretServiceMessages.noSessionBus)
        }
    }

    // MARK: - Bounded calls

    /// Runs `body` on a worker thread with a fresh GCancellable and waits at most `timeout`.
    /// On expiry the cancellable is cancelled and `.timeout` is thrown at once; the worker
    /// finishes on its own and releases what it holds.
    private func bounded<T: Sendable>(
        _ body: @escaping @Sendable (OpaquePointer?) -> Result<T, LibsecretFailure>
    ) throws -> T {
        let cancellable = Cancellable()
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let result = body(cancellable.pointer)
            outcome.set(result)
            done.signal()
        }

        let seconds = timeout.isFinite ? max(0, timeout) : 86_400
        if done.wait(timeout: .now() + seconds) == .timedOut {
            cancellable.cancel()
            throw SecureStoreError(kind: .timeout, message: SecretServiceMessages.timeout(timeout))
        }
        switch outcome.get() {
        case .success(let value)?:
            return value
        case .failure(let failure)?:
            throw failure.storeError(timeout: timeout)
        case nil:
            throw SecureStoreError(kind: .failed, message: "the Secret Service call ended without a result")
        }
    }
}

/// Owns one GCancellable; shared by the caller (to cancel) and the worker (to use).
// Unchecked: a GCancellable may be cancelled from any thread (GLib's thread-safety contract).
private final class Cancellable: @unchecked Sendable {
    let pointer: OpaquePointer?
    init() { pointer = authctl_secret_cancellable_new() }
    func cancel() { authctl_secret_cancellable_cancel(pointer) }
    deinit { authctl_secret_cancellable_free(pointer) }
}

/// The worker's result, handed to the caller under a lock.
private final class Outcome<T: Sendable>: Sendable {
    private let result = Mutex<Result<T, LibsecretFailure>?>(nil)
    func set(_ value: Result<T, LibsecretFailure>) { result.withLock { $0 = value } }
    func get() -> Result<T, LibsecretFailure>? { result.withLock { $0 } }
}

extension LibsecretFailure {
    /// Copies a filled AuthctlSecretError; nil when it holds no error.
    init?(_ error: AuthctlSecretError) {
        guard let domain = error.domain else { return nil }
        self.init(
            domain: String(cString: domain),
            code: Int(error.code),
            remoteName: error.remote_name.map { String(cString: $0) },
            message: error.message.map { String(cString: $0) } ?? "",
            stage: Stage(error.stage)
        )
    }

    static let unknown = LibsecretFailure(
        domain: "", code: 0, remoteName: nil,
        message: "unknown error", stage: .call)
}

extension SecretServiceDetour {
    init(_ failure: DBusConnectionFailure) {
        switch failure {
        case .unsupportedAddress: self = .address
        case .cannotConnect, .rejected, .closed, .timedOut: self = .connection
        case .wire, .errorReply: self = .answer
        case .unexpectedAnswer: self = .answer
        }
    }
}

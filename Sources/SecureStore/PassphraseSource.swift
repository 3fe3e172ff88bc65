#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Where the file store's passphrase came from (for `store doctor` and messages).
public enum PassphraseOrigin: Sendable, Equatable, CustomStringConvertible {
    /// `--passphrase-fd N`.
    case fileDescriptor(Int32)
    /// `AUTHCTL_STORE_PASSPHRASE_FILE`.
    case file(String)
    /// systemd's `$CREDENTIALS_DIRECTORY/authctl-passphrase`.
    case credential(String)
    /// `AUTHCTL_STORE_PASSPHRASE`.
    case environment
    /// The caller's prompt (a terminal).
    case prompt
    /// Given by the caller as a value.
    case given

    public var description: String {
        switch self {
        case .fileDescriptor(let fd): return "file descriptor \(fd) (--passphrase-fd)"
        case .file(let path): return "\(path) (AUTHCTL_STORE_PASSPHRASE_FILE)"
        case .credential(let path): return "the systemd credential \(path)"
        case .environment: return "AUTHCTL_STORE_PASSPHRASE"
        case .prompt: return "the terminal"
        case .given: return "the caller"
        }
    }
}

/// Gives the file store its passphrase, resolved lazily: only when a file must be opened or
/// created, and at most once per store.
public struct PassphraseSource: Sendable {
    private let resolve: @Sendable () throws -> (passphrase: String, origin: PassphraseOrigin)

    /// A source that runs `resolve` when the passphrase is first needed.
    public init(_ resolve: @escaping @Sendable () throws -> (passphrase: String, origin: PassphraseOrigin)) {
        self.resolve = resolve
    }

    /// A fixed passphrase (tests, or a caller that resolved it itself).
    public static func fixed(_ passphrase: String) -> PassphraseSource {
        PassphraseSource { (passphrase, .given) }
    }

    /// The non-interactive sources, in order, then `prompt`:
    /// 1. `fileDescriptor` (the CLI's `--passphrase-fd N`): read to its end, then closed;
    /// 2. `AUTHCTL_STORE_PASSPHRASE_FILE`: a path to a regular file;
    /// 3. `$CREDENTIALS_DIRECTORY/authctl-passphrase` (systemd's `LoadCredential=`), when it exists;
    /// 4. `AUTHCTL_STORE_PASSPHRASE`;
    /// 5. `prompt` (the CLI prompts without echo on a terminal; it returns nil when there is none).
    /// None gives `.noPassphrase` naming every source. Files and descriptors are read up to
    /// `maximumBytes`; one trailing newline (LF or CRLF) is dropped; an empty passphrase is refused.
    public static func standard(
        environment: [String: String], fileDescriptor: Int32? = nil,
        prompt: (@Sendable () throws -> String?)? = nil
    ) -> PassphraseSource {
        PassphraseSource {
            try resolveStandard(environment: environment, fileDescriptor: fileDescriptor, prompt: prompt)
        }
    }

    public static let maximumBytes = 4096
    public static let fileVariable = "AUTHCTL_STORE_PASSPHRASE_FILE"
    public static let variable = "AUTHCTL_STORE_PASSPHRASE"
    public static let credentialName = "authctl-passphrase"

    /// The passphrase and where it came from.
    public func passphrase() throws -> (passphrase: String, origin: PassphraseOrigin) {
        try resolve()
    }

    static func resolveStandard(
        environment: [String: String], fileDescriptor: Int32?,
        prompt: (@Sendable () throws -> String?)?
    ) throws -> (passphrase: String, origin: PassphraseOrigin) {
        if let fd = fileDescriptor {
            return (
                try checked(readDescriptor(fd, name: "file descriptor \(fd)"), from: .fileDescriptor(fd)),
                .fileDescriptor(fd)
            )
        }
        if let path = environment[fileVariable], !path.isEmpty {
            return (try checked(readFile(path, name: "\(path) (\(fileVariable))"), from: .file(path)), .file(path))
        }
        if let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty {
            let path = directory + "/" + credentialName
            var info = stat()
            if stat(path, &info) == 0 {
                return (
                    try checked(readFile(path, name: "the systemd credential \(path)"), from: .credential(path)),
                    .credential(path)
                )
            }
        }
        if let value = environment[variable] {
            return (try checked(value, from: .environment), .environment)
        }
        if let prompt, let typed = try prompt() {
            return (try checked(typed, from: .prompt), .prompt)
        }
        throw SecureStoreError(
            .noPassphrase,
            message:
                "the file store needs a passphrase and none was given: use --passphrase-fd N, "
                + "\(fileVariable) (a file holding it), a systemd credential named \(credentialName) "
                + "(LoadCredential=), \(variable), or run on a terminal to be asked")
    }

    private static func checked(_ passphrase: String, from origin: PassphraseOrigin) throws -> String {
        var text = passphrase
        // "\r\n" is one Character in Swift, and "\r\n".hasSuffix("\n") is false.
        if text.hasSuffix("\r\n") || text.hasSuffix("\n") { text.removeLast() }
        guard !text.isEmpty else {
            throw SecureStoreError(.noPassphrase, message: "the passphrase from \(origin) is empty")
        }
        return text
    }

    /// A regular file's contents (following symbolic links: mounted secrets are often links).
    static func readFile(_ path: String, name: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            throw SecureStoreError(
                .noPassphrase, message: "cannot read the passphrase from \(name): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw SecureStoreError(
                .noPassphrase, message: "cannot read the passphrase from \(name): not a regular file")
        }
        return try readAll(fd, name: name)
    }

    /// Reads an already open descriptor to its end and closes it (a pipe's writer expects that).
    static func readDescriptor(_ fd: Int32, name: String) throws -> String {
        defer { close(fd) }
        return try readAll(fd, name: name)
    }

    private static func readAll(_ fd: Int32, name: String) throws -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        defer { buffer.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count < 0 && errno == EAGAIN {
                // A non-blocking pipe or FIFO opened above: wait for its writer.
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                _ = poll(&poller, 1, -1)
                continue
            }
            guard count >= 0 else {
                throw SecureStoreError(
                    .noPassphrase,
                    message: "cannot read the passphrase from \(name): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
            guard bytes.count <= maximumBytes else {
                throw SecureStoreError(
                    .noPassphrase, message: "the passphrase from \(name) is longer than \(maximumBytes) bytes")
            }
        }
        defer { bytes.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw SecureStoreError(.noPassphrase, message: "the passphrase from \(name) is not UTF-8 text")
        }
        return text
    }
}

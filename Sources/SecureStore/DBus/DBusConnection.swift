#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Why a direct connection to the session bus did not give an answer. Every case but
/// `timedOut` means "let libsecret try": it reaches the same bus and says what is wrong in the
/// words the rest of authctl already uses.
enum DBusConnectionFailure: Error, Equatable {
    /// An address this client does not speak (tcp, launchd, autolaunch...), or none at all.
    case unsupportedAddress
    case cannotConnect(Int32)
    /// The bus did not accept the EXTERNAL authentication.
    case rejected
    /// The bus closed the connection, or a read or write failed.
    case closed
    /// Not D-Bus as the specification writes it, or larger than authctl reads.
    case wire(DBusWireError)
    /// The call was answered with a D-Bus error (its name only: its text is the peer's).
    case errorReply(String)
    /// An answer that is D-Bus but not what the interface documents.
    case unexpectedAnswer(String)
    /// The deadline passed.
    case timedOut
}

/// Where the session bus listens.
enum DBusAddress: Equatable {
    case path(String)
    /// A Linux abstract socket (its name, without the leading NUL).
    case abstract([UInt8])

    /// The session bus of `environment`, as libdbus and GDBus find it: the first address of
    /// `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`. Only `unix:path=` and
    /// `unix:abstract=` are spoken here; anything else is nil (libsecret then connects).
    static func sessionBus(environment: [String: String]) -> DBusAddress? {
        if let value = environment["DBUS_SESSION_BUS_ADDRESS"], !value.isEmpty {
            return parse(value)
        }
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else { return nil }
        return .path(runtime + "/bus")
    }

    /// The first of `;`-separated addresses, when it is `unix:` with a `path` or `abstract` key;
    /// values are %-unescaped as the specification says.
    static func parse(_ text: String) -> DBusAddress? {
        guard text.utf8.count <= 4096, let first = text.split(separator: ";", omittingEmptySubsequences: true).first,
            first.hasPrefix("unix:")
        else { return nil }
        var found: DBusAddress?
        for pair in first.dropFirst(5).split(separator: ",") {
            guard let equals = pair.firstIndex(of: "=") else { return nil }
            let key = pair[..<equals]
            guard let value = unescape(pair[pair.index(after: equals)...]), !value.isEmpty else { return nil }
            switch key {
            case "path":
                guard found == nil, value.first == UInt8(ascii: "/"), !value.contains(0) else { return nil }
                found = .path(String(decoding: value, as: UTF8.self))
            case "abstract":
                guard found == nil else { return nil }
                found = .abstract(value)
            case "guid": continue
            default: return nil  // listen-only keys (dir, tmpdir, runtime) or unknown ones
            }
        }
        return found
    }

    private static func unescape(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Hex.value(of:)), let low = iterator.next().flatMap(Hex.value(of:))
            else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return bytes
    }
}

/// A private connection to the session bus over its Unix socket: EXTERNAL authentication (the
/// kernel tells the bus who we are, no cookie file is read), `Hello`, then method calls, each
/// answer awaited until one deadline. Not shared between threads (its owner holds a lock).
final class DBusConnection {
    private let socket: Int32
    private var nextSerial: UInt32 = 1
    /// Messages read while waiting for another answer (signals such as NameAcquired are
    /// dropped; answers to calls not yet awaited are kept).
    private var pending: [DBusMessage] = []

    /// Connects, authenticates and says `Hello`, all by `deadline` (milliseconds of
    /// `AgentSocket.milliseconds()`).
    static func open(_ address: DBusAddress, deadline: UInt64) throws(DBusConnectionFailure) -> DBusConnection {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socket >= 0 else { throw .cannotConnect(errno) }
        // Owned from here on: whatever fails below, the connection's deinit closes it once.
        let connection = DBusConnection(socket: socket)
        try connection.connect(address)
        try connection.authenticate(deadline: deadline)
        let hello = try connection.send(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "Hello", body: [], preamble: Array("BEGIN\r\n".utf8))
        _ = try connection.answer(to: hello, deadline: deadline)
        return connection
    }

    private init(socket: Int32) {
        self.socket = socket
    }

    deinit { close(socket) }

    private func connect(_ address: DBusAddress) throws(DBusConnectionFailure) {
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        let name: [UInt8]
        switch address {
        case .path(let path): name = Array(path.utf8) + [0]
        case .abstract(let abstract): name = [0] + abstract
        }
        let capacity = MemoryLayout.size(ofValue: socketAddress.sun_path)
        guard name.count <= capacity else { throw .unsupportedAddress }
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
            for (index, byte) in name.enumerated() { raw[index] = byte }
        }
        // An abstract name's length is exactly its bytes; a path's includes its NUL.
        let length = socklen_t(MemoryLayout<sa_family_t>.size + name.count)
        let connected = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, length) }
        }
        guard connected == 0 else { throw .cannotConnect(errno) }
    }

    /// The specification's SASL exchange: a NUL byte (which carries our credentials), then
    /// `AUTH EXTERNAL <our uid in hex>`; the bus answers `OK <guid>` or `REJECTED`.
    private func authenticate(deadline: UInt64) throws(DBusConnectionFailure) {
        let hexUID = Hex.encode(String(getuid()).utf8)
        guard AgentSocket.send(socket, [0] + Array("AUTH EXTERNAL \(hexUID)\r\n".utf8)) else { throw .closed }
        var line: [UInt8] = []
        while !(line.count >= 2 && line[line.count - 2] == 0x0D && line[line.count - 1] == 0x0A) {
            guard line.count < 512 else { throw .rejected }
            guard let byte = AgentSocket.receive(socket, count: 1, deadline: deadline) else {
                throw AgentSocket.milliseconds() >= deadline ? .timedOut : .closed
            }
            line += byte
        }
        guard line.starts(with: Array("OK ".utf8)) else { throw .rejected }
    }

    /// Sends a method call and returns its serial, to be awaited with `answer(to:deadline:)`.
    /// Calls may be sent one after another before any answer is awaited.
    func send(
        destination: String, path: String, interface: String, member: String, body: [DBusValue],
        preamble: [UInt8] = []
    ) throws(DBusConnectionFailure) -> UInt32 {
        let serial = nextSerial
        nextSerial &+= 1
        let message = DBusMessage.methodCall(
            serial: serial, destination: destination, path: path, interface: interface, member: member, body: body)
        guard AgentSocket.send(socket, preamble + message.encoded()) else { throw .closed }
        return serial
    }

    /// The method return for `serial`; a D-Bus error answer is thrown as `.errorReply`.
    func answer(to serial: UInt32, deadline: UInt64) throws(DBusConnectionFailure) -> DBusMessage {
        while true {
            let message: DBusMessage
            if let index = pending.firstIndex(where: { $0.replySerial == serial }) {
                message = pending.remove(at: index)
            } else {
                message = try receive(deadline: deadline)
            }
            guard message.replySerial == serial else {
                if message.kind == .methodReturn || message.kind == .error, pending.count < 16 {
                    pending.append(message)
                }
                continue
            }
            if message.kind == .error { throw .errorReply(message.errorName ?? "") }
            guard message.kind == .methodReturn else { throw .unexpectedAnswer("a call where an answer was due") }
            return message
        }
    }

    private func receive(deadline: UInt64) throws(DBusConnectionFailure) -> DBusMessage {
        func read(_ count: Int) throws(DBusConnectionFailure) -> [UInt8] {
            guard let bytes = AgentSocket.receive(socket, count: count, deadline: deadline) else {
                throw AgentSocket.milliseconds() >= deadline ? .timedOut : .closed
            }
            return bytes
        }
        let prefix = try read(16)
        do {
            let total = try DBusMessage.length(ofPrefix: prefix)
            return try DBusMessage.decode(prefix + (try read(total - 16)))
        } catch let failure as DBusWireError {
            throw .wire(failure)
        } catch let failure as DBusConnectionFailure {
            throw failure
        } catch {
            throw .closed
        }
    }
}

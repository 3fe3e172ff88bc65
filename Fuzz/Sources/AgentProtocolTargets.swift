import AuthctlCore
import Foundation
import SecureStore

/// The key agent's protocol (SecureStore's `AgentMessage`): the frames one process of the user
/// sends another over the agent's socket. Besides "no crash", a frame that parses encodes back
/// to the same bytes, and every typed field accessor stays within bounds.
enum AgentProtocolTargets {
    static let all: [String: @Sendable (Data) -> Void] = ["agent-message": agentMessage]

    static func agentMessage(_ data: Data) {
        let frame = [UInt8](data)
        guard let message = try? AgentMessage.parse(frame: frame) else { return }
        precondition(message.encoded() == frame, "an agent frame read and written again differs")
        precondition(message.fields.count <= AgentMessage.maximumFields, "more fields than the limit")
        for index in 0..<(message.fields.count + 1) {
            _ = try? message.path(index)
            _ = try? message.number(index, "n")
            _ = try? message.field(index, "f", maximum: 16)
        }
    }
}

/// The D-Bus messages the Secret Service's direct read decodes (SecureStore's `DBusMessage`):
/// what the session bus or any process on it may send. Besides "no crash", the length read from
/// the first 16 bytes is the length decoded, and a message that decodes encodes to bytes that
/// decode and encode to themselves again.
enum DBusMessageTargets {
    static let all: [String: @Sendable (Data) -> Void] = ["dbus-message": dbusMessage]

    static func dbusMessage(_ data: Data) {
        let bytes = [UInt8](data)
        guard let message = try? DBusMessage.decode(bytes) else { return }
        precondition((try? DBusMessage.length(ofPrefix: bytes)) == bytes.count, "a length other than the header's")
        let encoded = message.encoded()
        guard let again = try? DBusMessage.decode(encoded) else {
            preconditionFailure("a decoded message encodes to bytes that do not decode")
        }
        precondition(again.encoded() == encoded, "a message encoded twice differs")
        precondition(encoded.count <= DBusMessage.maximumSize + 4096, "an encoding far larger than its message")
    }
}

/// The request heads `exec --serve`'s credentials endpoint judges (AuthctlCore's
/// `EndpointRequest`): whatever a local process sends to its loopback port. Besides "no crash",
/// only a head that carries the token is ever routed, and a refusal is a 4xx status.
enum EndpointRequestTargets {
    static let all: [String: @Sendable (Data) -> Void] = ["endpoint-request": endpointRequest]
    static let token = AuthorizationToken(text: String(repeating: "ab", count: 32))

    static func endpointRequest(_ data: Data) {
        let head = [UInt8](data.prefix(EndpointRequest.maxHeadBytes + 64))
        switch EndpointRequest.route(head, port: 4321, token: token) {
        case .success:
            precondition(
                head.windows(ofCount: token.text.utf8.count).contains { $0.elementsEqual(token.text.utf8) },
                "a request without the token was routed")
        case .failure(let refusal):
            precondition((400..<500).contains(refusal.status), "a refusal that is not a 4xx status")
        }
    }
}

extension Array {
    fileprivate func windows(ofCount count: Int) -> [ArraySlice<Element>] {
        guard count > 0, self.count >= count else { return [] }
        return (0...(self.count - count)).map { self[$0..<($0 + count)] }
    }
}

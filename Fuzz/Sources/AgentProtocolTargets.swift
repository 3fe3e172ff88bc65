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

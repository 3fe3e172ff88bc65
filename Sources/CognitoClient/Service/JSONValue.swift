#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Reading JSON of unknown shape (an error body read for its `__type` and `message`, a request body
/// searched for secrets) with `JSONValue`: JSONSerialization is in the full Foundation, which
/// CognitoClient does not use (docs/performance.md).
extension JSONValue {
    /// The object or array `data` holds; nil when it is not JSON or only a bare value (a string,
    /// a number...), as JSONSerialization's default reading.
    static func document(_ data: Data) -> JSONValue? {
        switch try? JSONDecoder().decode(JSONValue.self, from: data) {
        case let value? where value.isContainer: return value
        default: return nil
        }
    }

    var isContainer: Bool {
        switch self {
        case .array, .object: return true
        default: return false
        }
    }

    /// The member `key` of an object; nil for anything else.
    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The text of a string; nil for anything else.
    var string: String? {
        if case .string(let text) = self { return text }
        return nil
    }
}

import CognitoClient
import Foundation

/// A transport that answers from a script and records what was sent. It stands in for
/// Cognito in unit tests; the integration suite uses the real one against an emulator.
final class ScriptedTransport: HTTPTransport {
    enum Step {
        case respond(HTTPResponse)
        case fail(TransportError)
    }

    var steps: [Step]
    private(set) var requests: [HTTPRequest] = []

    init(_ steps: [Step]) {
        self.steps = steps
    }

    func send(_ request: HTTPRequest) throws -> HTTPResponse {
        requests.append(request)
        guard !steps.isEmpty else {
            throw TransportError(kind: .other, message: "script exhausted")
        }
        switch steps.removeFirst() {
        case .respond(let response): return response
        case .fail(let error): throw error
        }
    }

    /// The X-Amz-Target operation of each request.
    var operations: [String] {
        requests.map { request in
            let target = request.headers.first { $0.name == "X-Amz-Target" }?.value ?? ""
            return String(target.split(separator: ".").last ?? "")
        }
    }

    /// The JSON body of request `index`.
    func body(_ index: Int) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: requests[index].body)) as? [String: Any] ?? [:]
    }

    static func json(_ object: [String: Any], status: Int = 200) -> Step {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return .respond(
            HTTPResponse(status: status, headers: ["content-type": "application/x-amz-json-1.1"], body: data))
    }

    static func error(_ type: String, _ message: String, status: Int = 400) -> Step {
        json(["__type": type, "message": message], status: status)
    }
}

/// Builds unsigned JWTs with the given claims (the client only decodes them).
enum TestJWT {
    static func make(_ claims: [String: Any]) -> String {
        let header = encode(["alg": "RS256", "kid": "test"])
        let payload = encode(claims)
        return "\(header).\(payload).c2lnbmF0dXJl"
    }

    static func encode(_ object: [String: Any]) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: object)) ?? Data()
        return data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}

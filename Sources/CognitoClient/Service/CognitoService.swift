#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Cognito's JSON-over-HTTPS protocol: `POST <endpoint>/` with
/// `X-Amz-Target: <targetPrefix>.<Operation>` (user pools: `AWSCognitoIdentityProviderService`;
/// identity pools, see `CognitoIdentityService`: `AWSCognitoIdentityService`).
/// Synchronous on purpose: a command makes a handful of calls in sequence.
public final class CognitoService {
    public let endpoint: String
    public let transport: HTTPTransport
    public var retryPolicy: RetryPolicy
    /// The service's `targetPrefix` in its botocore model.
    public let targetPrefix: String
    /// Extra headers for every call (e.g. SigV4 signing is added by a signer, not here).
    public var requestSigner: ((inout HTTPRequest) throws -> Void)?
    /// The `x-amzn-RequestId` of the last answer, success or refusal (nil when none came or it had
    /// none): what the service's own logs (CloudTrail) know the call by, for an audit record.
    public private(set) var lastRequestId: String?

    public init(
        endpoint: String, transport: HTTPTransport, retryPolicy: RetryPolicy = .standard,
        targetPrefix: String = "AWSCognitoIdentityProviderService"
    ) {
        self.endpoint = endpoint.hasSuffix("/") ? endpoint : endpoint + "/"
        self.transport = transport
        self.retryPolicy = retryPolicy
        self.targetPrefix = targetPrefix
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .custom { keys in
            AnyCodingKey(pascalCase(keys.last?.stringValue ?? ""))
        }
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .custom { keys in
            AnyCodingKey(camelCase(keys.last?.stringValue ?? ""))
        }
        return decoder
    }()

    /// Calls one operation. `idempotent` says whether repeating it after an unknown outcome is safe.
    public func call<Request: Encodable, Response: Decodable>(
        _ operation: String, _ request: Request, idempotent: Bool, as: Response.Type = Response.self
    ) throws -> Response {
        let body: Data
        do {
            body = try Self.encoder.encode(request)
        } catch {
            throw CognitoError.invalidInput("could not encode \(operation) request: \(error)")
        }
        var httpRequest = HTTPRequest(
            url: endpoint,
            headers: [
                ("Content-Type", "application/x-amz-json-1.1"),
                ("X-Amz-Target", "\(targetPrefix).\(operation)"),
                ("Accept", "application/json"),
            ],
            body: body)
        try requestSigner?(&httpRequest)

        var attempt = 0
        var outcomeUnknown = false
        while true {
            attempt += 1
            do {
                return try send(httpRequest, operation: operation, as: Response.self)
            } catch var error as CognitoError {
                outcomeUnknown = outcomeUnknown || error.mayHaveBeenPerformed
                guard attempt < retryPolicy.maxAttempts, retryPolicy.shouldRetry(error, idempotent: idempotent),
                    let wait = retryPolicy.wait(afterAttempt: attempt, for: error)
                else {
                    retryPolicy.report(
                        SafeName.operation(of: httpRequest), attempt: attempt, cause: RetryPolicy.cause(of: error),
                        retryPolicy.verdictWithoutRetry(afterAttempt: attempt, for: error, idempotent: idempotent))
                    error.outcomeUnknown = outcomeUnknown
                    error.endpoint = endpoint
                    throw error
                }
                retryPolicy.report(
                    SafeName.operation(of: httpRequest), attempt: attempt, cause: RetryPolicy.cause(of: error),
                    .retrying, wait: wait)
                retryPolicy.pause(wait)
            }
        }
    }

    private func send<Response: Decodable>(_ request: HTTPRequest, operation: String, as: Response.Type) throws
        -> Response
    {
        let response: HTTPResponse
        lastRequestId = nil
        do {
            response = try transport.send(request)
        } catch let error as TransportError {
            throw CognitoError.transport(error)
        }
        lastRequestId = response.headers["x-amzn-requestid"].map { String($0.prefix(128)) }
        guard (200..<300).contains(response.status) else {
            var error = CognitoErrorParser.parse(response, request: request)
            error.retryAfter = RetryAfter.seconds(response.headers["retry-after"], now: Date())
            throw error
        }
        let body = response.body.isEmpty ? Data("{}".utf8) : response.body
        do {
            return try Self.decoder.decode(Response.self, from: body)
        } catch let error as TokenShapeError {
            throw CognitoError.malformed(
                "the service's answer to \(operation) holds a token authctl refuses: \(error.description)",
                status: response.status)
        } catch {
            let detail =
                JSONValue.document(body) == nil
                ? "a body that is not JSON" + (response.headers["content-type"].map { " (\($0))" } ?? "")
                : "JSON that does not match the \(operation) response"
            throw CognitoError.malformed(
                "unexpected answer from the service to \(operation): HTTP \(response.status) with \(detail)",
                status: response.status)
        }
    }

    /// Every page of a listing: `page` is called with the previous page's token (nil first) and
    /// answers its items and the next token; a service that hands back a token it gave before is
    /// not followed round, nor one that keeps answering pages past `maximum` items.
    func everyPage<Item>(maximum: Int = .max, _ page: (String?) throws -> ([Item], String?)) throws -> [Item] {
        var items: [Item] = []
        var token: String?
        var seen = Set<String>()
        repeat {
            let (more, next) = try page(token)
            items += more
            token = next.flatMap { $0.isEmpty || seen.contains($0) ? nil : $0 }
            if let token { seen.insert(token) }
        } while token != nil && items.count < maximum
        return items.count > maximum ? Array(items.prefix(maximum)) : items
    }

    static func pascalCase(_ key: String) -> String {
        guard let first = key.first else { return key }
        return first.uppercased() + key.dropFirst()
    }

    static func camelCase(_ key: String) -> String {
        guard let first = key.first else { return key }
        return first.lowercased() + key.dropFirst()
    }
}

struct AnyCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

/// For operations whose answer carries nothing (`{}`).
public struct EmptyResponse: Decodable, Sendable {
    public init() {}
}

/// An `HTTPTransport` made on its first request. Commands that may answer without the network
/// (`authctl token` on a fresh session) then never initialise libcurl or TLS, nor read a CA
/// bundle. An error from `make` is thrown by that first `send` (and by each later one, until a
/// transport is made).
public final class DeferredTransport: HTTPTransport {
    private let make: () throws -> HTTPTransport
    private var made: HTTPTransport?

    public init(_ make: @escaping () throws -> HTTPTransport) {
        self.make = make
    }

    /// Whether the real transport has been made (tests check that no request means no set-up).
    public var isMade: Bool { made != nil }

    public func send(_ request: HTTPRequest) throws -> HTTPResponse {
        if let made { return try made.send(request) }
        let transport = try make()
        made = transport
        return try transport.send(request)
    }
}

import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// AWS credentials for the admin (IAM-authorised) operations. Never printed or logged.
public struct AWSCredentials: Sendable, Equatable {
    public var accessKeyId: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }
}

/// AWS Signature Version 4 for Cognito's JSON operations (`POST /`, no query string).
/// Signs every header the request carries except hop-by-hop ones and `user-agent`,
/// plus `host` and `x-amz-date`, as botocore does.
public struct SigV4Signer: Sendable {
    public var credentials: AWSCredentials
    public var region: String
    public var service: String

    public init(credentials: AWSCredentials, region: String, service: String = "cognito-idp") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// Hop-by-hop and proxy-rewritten headers are never signed (the same list as botocore's).
    static let unsignedHeaders: Set<String> = [
        "authorization", "connection", "expect", "keep-alive", "proxy-authenticate", "proxy-authorization",
        "te", "trailer", "transfer-encoding", "upgrade", "user-agent", "x-amzn-trace-id",
    ]

    /// Adds `Host`, `X-Amz-Date`, `X-Amz-Security-Token` (with a session token) and `Authorization`.
    public func sign(_ request: inout HTTPRequest, date: Date) throws {
        guard let components = URLComponents(string: request.url), let host = components.host else {
            throw CognitoError.invalidInput("cannot sign a request to \(request.url): no host")
        }
        let hostHeader: String
        if let port = components.port,
            !((components.scheme == "https" && port == 443) || (components.scheme == "http" && port == 80))
        {
            hostHeader = "\(host):\(port)"
        } else {
            hostHeader = host
        }
        let amzDate = Self.amzDate(date)
        let day = String(amzDate.prefix(8))

        request.headers.removeAll {
            ["host", "x-amz-date", "x-amz-security-token", "authorization"].contains($0.name.lowercased())
        }
        request.headers.append(("Host", hostHeader))
        request.headers.append(("X-Amz-Date", amzDate))
        if let token = credentials.sessionToken {
            request.headers.append(("X-Amz-Security-Token", token))
        }

        var canonical: [String: String] = [:]
        for header in request.headers where !Self.unsignedHeaders.contains(header.name.lowercased()) {
            let name = header.name.lowercased()
            let value = header.value.trimmedBlanks()
                .split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
            canonical[name] = canonical[name].map { $0 + "," + value } ?? value
        }
        let names = canonical.keys.sorted()
        let signedHeaders = names.joined(separator: ";")
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let canonicalRequest = [
            request.method.uppercased(),
            path,
            Self.canonicalQuery(components),
            names.map { "\($0):\(canonical[$0] ?? "")\n" }.joined(),
            signedHeaders,
            Self.hex(SHA256.hash(data: request.body)),
        ].joined(separator: "\n")

        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8))),
        ].joined(separator: "\n")

        var key = SymmetricKey(data: Data("AWS4\(credentials.secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        request.headers.append(
            (
                "Authorization",
                "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyId)/\(scope), SignedHeaders=\(signedHeaders), Signature=\(signature)"
            ))
    }

    static func amzDate(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        func digits(_ value: Int32, _ count: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, count - text.count)) + text
        }
        return digits(parts.tm_year + 1900, 4) + digits(parts.tm_mon + 1, 2) + digits(parts.tm_mday, 2) + "T"
            + digits(parts.tm_hour, 2) + digits(parts.tm_min, 2) + digits(parts.tm_sec, 2) + "Z"
    }

    static func canonicalQuery(_ components: URLComponents) -> String {
        guard let items = components.percentEncodedQueryItems, !items.isEmpty else { return "" }
        return items.map { "\($0.name)=\($0.value ?? "")" }.sorted().joined(separator: "&")
    }

    static func hex<D: Sequence>(_ digest: D) -> String where D.Element == UInt8 {
        Hex.encode(Array(digest))
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Tokens issued through the user-pool API rather than the managed-login domain: GetDerivedToken
// (RFC 8693 token exchange) and GetClientToken (machine-to-machine). Shapes from Cognito's service
// model (botocore cognito-idp 1.44.8).

/// `TokenTypeIdentifierType`: what a presented token is.
public enum PresentedTokenType: String, Encodable, Sendable, Equatable {
    case accessToken = "ACCESS_TOKEN"
    case idToken = "ID_TOKEN"
}

/// What GetDerivedToken is asked for: one audience or one resource (the service takes one of
/// the two, never both), and the scopes wanted (none: the subject token's).
public struct DerivedTokenRequest: Sendable, Equatable {
    public enum Target: Sendable, Equatable, Hashable {
        case audience(String)
        case resource(String)
    }
    public var target: Target
    public var scopes: [String]

    public init(target: Target, scopes: [String]) {
        self.target = target
        self.scopes = scopes
    }
}

struct GetDerivedTokenRequest: Encodable {
    var clientId: String
    var clientSecret: String?
    var subjectToken: String
    var subjectTokenType: PresentedTokenType
    var actorToken: String?
    var actorTokenType: PresentedTokenType?
    var scopes: [String]?
    var audiences: [String]?
    var resources: [String]?
    var requestedTokenType: PresentedTokenType?
}

/// GetDerivedToken's answer. `issuedToken` is checked for a token's shape when decoded.
public struct DerivedToken: Decodable, Sendable, Equatable {
    public var issuedToken: String
    public var issuedTokenType: String?
    public var tokenType: String?
    /// Seconds, as the service says (bounded by the caller).
    public var expiresIn: Int?
    /// The scopes granted (the intersection of those asked, the subject token's and the client's).
    public var scopes: [String]?

    enum CodingKeys: String, CodingKey {
        case issuedToken, issuedTokenType, tokenType, expiresIn, scopes
    }

    public init(issuedToken: String, issuedTokenType: String?, tokenType: String?, expiresIn: Int?, scopes: [String]?) {
        self.issuedToken = issuedToken
        self.issuedTokenType = issuedTokenType
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.scopes = scopes
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        issuedToken = try TokenShape.checked(c.decode(String.self, forKey: .issuedToken), as: "IssuedToken")
        issuedTokenType = try c.decodeIfPresent(String.self, forKey: .issuedTokenType).map { String($0.prefix(32)) }
        tokenType = try c.decodeIfPresent(String.self, forKey: .tokenType).map { String($0.prefix(32)) }
        expiresIn = try c.decodeIfPresent(Int.self, forKey: .expiresIn)
        scopes = try c.decodeIfPresent([String].self, forKey: .scopes).map {
            Array($0.prefix(50).map { String($0.prefix(256)) })
        }
    }
}

struct GetClientTokenRequest: Encodable {
    var clientId: String
    var secret: String
    var scopes: [String]?
}

struct GetClientTokenResponse: Decodable {
    var clientAuthenticationResult: ClientAuthenticationResult?
}

/// `ClientAuthenticationResultType`: a machine token from GetClientToken.
public struct ClientAuthenticationResult: Decodable, Sendable, Equatable {
    public var accessToken: String?
    public var expiresIn: Int?
    public var tokenType: String?

    enum CodingKeys: String, CodingKey {
        case accessToken, expiresIn, tokenType
    }

    public init(accessToken: String?, expiresIn: Int?, tokenType: String?) {
        self.accessToken = accessToken
        self.expiresIn = expiresIn
        self.tokenType = tokenType
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try c.decodeIfPresent(String.self, forKey: .accessToken).map {
            try TokenShape.checked($0, as: "AccessToken")
        }
        expiresIn = try c.decodeIfPresent(Int.self, forKey: .expiresIn)
        tokenType = try c.decodeIfPresent(String.self, forKey: .tokenType).map { String($0.prefix(32)) }
    }
}

extension CognitoService {
    /// GetDerivedToken: `subjectToken` (the user's access token) exchanged for a token bound to one
    /// audience or resource; with `actorToken`, one naming the intermediary in its `act` claim.
    /// Not repeated after an unknown outcome (each answer is a new token; the caller asks again).
    public func getDerivedToken(
        _ request: DerivedTokenRequest, subjectToken: String, client: AppClient, actorToken: String? = nil
    ) throws -> DerivedToken {
        var audiences: [String]?
        var resources: [String]?
        switch request.target {
        case .audience(let audience): audiences = [audience]
        case .resource(let resource): resources = [resource]
        }
        return try call(
            "GetDerivedToken",
            GetDerivedTokenRequest(
                clientId: client.clientId, clientSecret: client.clientSecret, subjectToken: subjectToken,
                subjectTokenType: .accessToken, actorToken: actorToken,
                actorTokenType: actorToken == nil ? nil : .accessToken,
                scopes: request.scopes.isEmpty ? nil : request.scopes, audiences: audiences, resources: resources,
                requestedTokenType: .accessToken),
            idempotent: false)
    }

    /// GetClientToken: a machine-to-machine access token for a client whose only flow is
    /// `ALLOW_CLIENT_TOKEN_AUTH` (no managed-login domain needed). Safe to repeat (a token more).
    public func getClientToken(clientId: String, secret: String, scopes: [String]) throws -> ClientAuthenticationResult
    {
        let answer: GetClientTokenResponse = try call(
            "GetClientToken",
            GetClientTokenRequest(clientId: clientId, secret: secret, scopes: scopes.isEmpty ? nil : scopes),
            idempotent: true)
        guard let result = answer.clientAuthenticationResult, result.accessToken != nil else {
            throw CognitoError.malformed("the service's answer to GetClientToken carries no access token", status: 200)
        }
        return result
    }
}

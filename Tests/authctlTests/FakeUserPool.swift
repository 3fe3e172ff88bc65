import CognitoClient
import Foundation
import LocalFormats

@testable import AuthctlCore

/// A typed fake of the user pool, for the use-case tests: each request is decoded into its
/// operation's shape (botocore's member names), each answer encoded from a typed value, and every
/// call recorded as a typed `Call`, so a test states what the service was asked in values, not
/// dictionaries. It sits on `FakeCognito` (the transport), whose untyped handlers older tests use.
final class FakeUserPool {
    /// What the service was asked.
    enum Call: Equatable {
        case initiateAuth(flow: String, username: String)
        case associateSoftwareToken(session: String)
        case refresh(refreshToken: String)
        case revoke(refreshToken: String)
        case getUser(accessToken: String)
    }

    /// How InitiateAuth answers: tokens, or a challenge with its parameters.
    enum FirstAnswer {
        case tokens
        case challenge(ChallengeName, parameters: [String: String])
    }

    /// Passwords by username; a sign-in with another password is refused as the service does.
    var passwords: [String: String] = [:]
    var firstAnswer = FirstAnswer.tokens
    /// Lifetimes of what it issues, in seconds (an app client may give id tokens a shorter life).
    var accessLifetime = 3600
    var idLifetime = 3600
    /// GetUser refuses the next access tokens with these refusals, in turn.
    var getUserRefusals: [(type: String, message: String)] = []
    private(set) var calls: [Call] = []
    /// Which user each refresh token it issued belongs to.
    private var refreshOwners: [String: String] = [:]
    private var issued = 0
    private let now: Date

    init(now: Date, on cognito: FakeCognito) {
        self.now = now
        cognito.answer("InitiateAuth") { [unowned self] (request: InitiateAuthRequest) in
            let username = request.authParameters["USERNAME"] ?? ""
            calls.append(.initiateAuth(flow: request.authFlow, username: username))
            guard passwords[username] == request.authParameters["PASSWORD"] else {
                throw FakeRefusal("NotAuthorizedException", "Incorrect username or password.")
            }
            switch firstAnswer {
            case .tokens:
                return AuthAnswer(authenticationResult: issue(to: username))
            case .challenge(let name, let parameters):
                var parameters = parameters
                parameters["USER_ID_FOR_SRP"] = username
                return AuthAnswer(
                    challengeName: name.rawValue, session: "challenge-session", challengeParameters: parameters)
            }
        }
        cognito.answer("AssociateSoftwareToken") { [unowned self] (request: SessionRequest) in
            calls.append(.associateSoftwareToken(session: request.session))
            return SecretAnswer(secretCode: "JBSWY3DPEHPK3PXP", session: "associated-session")
        }
        cognito.answer("GetTokensFromRefreshToken") { [unowned self] (request: RefreshRequest) in
            calls.append(.refresh(refreshToken: request.refreshToken))
            guard let owner = refreshOwners[request.refreshToken] else {
                throw FakeRefusal("NotAuthorizedException", "Refresh Token has been revoked")
            }
            return AuthAnswer(authenticationResult: issue(to: owner))
        }
        cognito.answer("RevokeToken") { [unowned self] (request: RevokeRequest) in
            calls.append(.revoke(refreshToken: request.token))
            refreshOwners[request.token] = nil
            return Empty()
        }
        cognito.answer("GetUser") { [unowned self] (request: AccessTokenRequest) in
            calls.append(.getUser(accessToken: request.accessToken))
            if !getUserRefusals.isEmpty {
                let refusal = getUserRefusals.removeFirst()
                throw FakeRefusal(refusal.type, refusal.message)
            }
            return UserAnswer(username: "alice", userAttributes: [AttributeType(name: "sub", value: "sub-alice")])
        }
    }

    /// Gives `username`'s refresh token to the pool, as if it had issued it (a seeded session).
    func knows(refreshToken: String, of username: String) { refreshOwners[refreshToken] = username }

    /// Whether the refresh token is still good at the service.
    func accepts(refreshToken: String) -> Bool { refreshOwners[refreshToken] != nil }

    /// Tokens for `username` (its sub is `sub-<username>`), each issue with a new refresh token.
    func issue(to username: String) -> AuthenticationResult {
        issued += 1
        let refresh = "refresh-\(username)-\(issued)"
        refreshOwners[refresh] = username
        return Self.tokens(
            username: username, now: now, accessLifetime: accessLifetime, idLifetime: idLifetime, refresh: refresh,
            serial: issued)
    }

    static func tokens(
        username: String, now: Date, accessLifetime: Int = 3600, idLifetime: Int = 3600, refresh: String,
        serial: Int = 0
    ) -> AuthenticationResult {
        let sub = "sub-\(username)"
        let access = FakeCognito.jwt([
            "username": username, "sub": sub, "token_use": "access", "iss": FakeCognito.issuer,
            "client_id": "client1", "exp": now.timeIntervalSince1970 + Double(accessLifetime), "jti": "a\(serial)",
        ])
        let id = FakeCognito.jwt([
            "cognito:username": username, "sub": sub, "token_use": "id", "iss": FakeCognito.issuer, "aud": "client1",
            "exp": now.timeIntervalSince1970 + Double(idLifetime), "jti": "i\(serial)",
        ])
        return AuthenticationResult(
            accessToken: access, expiresIn: accessLifetime, tokenType: "Bearer", refreshToken: refresh, idToken: id)
    }

    /// Stores a session of `username` in `store`, as a sign-in here would have, known to the pool.
    func seed(
        _ username: String, in harness: Harness, accessLifetime: Int = 3600, idLifetime: Int = 3600
    ) throws -> StoredSession {
        let refresh = "refresh-\(username)-seeded"
        knows(refreshToken: refresh, of: username)
        let tokens = Self.tokens(
            username: username, now: now, accessLifetime: accessLifetime, idLifetime: idLifetime, refresh: refresh)
        let client = try ClientSettings(
            try SettingsResolver.resolve(GlobalSettingsInput(), environment: harness.host.environment))
        let session = try StoredSession(
            tokens: tokens, fallbackUsername: username, profile: "default", client: client, now: now)
        try save(in: harness.store, session)
        return session
    }

    // The operations' shapes, as botocore names their members (the fake's coders map the case).

    struct InitiateAuthRequest: Decodable {
        var authFlow: String
        var clientId: String
        var authParameters: [String: String]
    }
    struct SessionRequest: Decodable { var session: String }
    struct RefreshRequest: Decodable {
        var refreshToken: String
        var clientId: String
    }
    struct RevokeRequest: Decodable {
        var token: String
        var clientId: String
    }
    struct AccessTokenRequest: Decodable { var accessToken: String }

    struct AuthAnswer: Encodable {
        var challengeName: String?
        var session: String?
        var challengeParameters: [String: String]?
        var authenticationResult: AuthenticationResult?
    }
    struct SecretAnswer: Encodable {
        var secretCode: String
        var session: String
    }
    struct UserAnswer: Encodable {
        var username: String
        var userAttributes: [AttributeType]
    }
    struct Empty: Encodable {}
}

/// A refusal the fake answers with: the error type and message, HTTP 400.
struct FakeRefusal: Error {
    var type: String
    var message: String
    init(_ type: String, _ message: String) { (self.type, self.message) = (type, message) }
}

extension FakeCognito {
    /// Answers `operation` with a typed handler: the request body decoded into `Request`, the
    /// answer encoded from `Response` (or the refusal thrown), member names in botocore's case.
    func answer<Request: Decodable, Response: Encodable>(
        _ operation: String, _ handler: @escaping (Request) throws -> Response
    ) {
        handlers[operation] = { body in
            do {
                let data = try JSONSerialization.data(withJSONObject: body)
                let decoder = JSONDecoder()
                decoder.keyDecodingStrategy = .custom { path in
                    let key = path.last!.stringValue
                    if key.uppercased() == key { return AnyKey(key) }
                    return AnyKey(key.prefix(1).lowercased() + key.dropFirst())
                }
                let response = try handler(try decoder.decode(Request.self, from: data))
                let encoder = JSONEncoder()
                encoder.keyEncodingStrategy = .custom { path in
                    let key = path.last!.stringValue
                    // A map's keys (challenge parameters) are the service's own: left as they are.
                    if key.uppercased() == key { return AnyKey(key) }
                    return AnyKey(key.prefix(1).uppercased() + key.dropFirst())
                }
                let object = try JSONSerialization.jsonObject(with: try encoder.encode(response))
                return (200, object as? [String: Any] ?? [:])
            } catch let refusal as FakeRefusal {
                return FakeCognito.error(refusal.type, refusal.message)
            } catch {
                return FakeCognito.error("InvalidParameterException", "the fake could not read the request: \(error)")
            }
        }
    }
}

private struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

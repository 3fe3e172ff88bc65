#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The app client a command talks to.
public struct AppClient: Sendable, Equatable {
    public var userPoolId: String
    public var clientId: String
    /// Set when the app client has a secret: then every call carries SECRET_HASH.
    public var clientSecret: String?

    public init(userPoolId: String, clientId: String, clientSecret: String? = nil) {
        self.userPoolId = userPoolId
        self.clientId = clientId
        self.clientSecret = clientSecret
    }

    /// SECRET_HASH for `username`, or nil when the client has no secret.
    public func secretHash(for username: String) -> String? {
        clientSecret.map { SecretHash.compute(username: username, clientId: clientId, clientSecret: $0) }
    }
}

public enum PasswordFlow: String, Sendable, CaseIterable {
    /// USER_SRP_AUTH: the password never leaves the machine.
    case srp
    /// USER_PASSWORD_AUTH: the password is sent (over TLS) to Cognito.
    case password
}

/// A challenge the service put to the client that needs something from the person.
public struct AuthChallenge: Sendable {
    public var name: ChallengeName
    public var parameters: [String: String]
    /// The username the challenge is for (the service's, not an alias typed at sign-in).
    public var username: String
    /// The challenge session (for calls made while answering, such as AssociateSoftwareToken).
    public var session: String?
    /// 1 for the first answer; more when the previous code did not match and the session lives on.
    public var attempt: Int = 1
    /// Why the previous answer to this same challenge was refused.
    public var previousError: CognitoError?

    public init(name: ChallengeName, parameters: [String: String], username: String, session: String? = nil) {
        self.name = name
        self.parameters = parameters
        self.username = username
        self.session = session
    }

    /// Challenges answered with a one-time code, which a person may retype.
    public var isCodeChallenge: Bool { name.isCodeChallenge }

    /// SELECT_MFA_TYPE's factors (MFAS_CAN_CHOOSE) or MFA_SETUP's (MFAS_CAN_SETUP): JSON arrays
    /// of challenge names, e.g. `["SMS_MFA","SOFTWARE_TOKEN_MFA"]`; empty when absent or not one.
    public var factorsToChoose: [ChallengeName] { Self.names(parameters["MFAS_CAN_CHOOSE"]) }
    public var factorsToSetUp: [ChallengeName] { Self.names(parameters["MFAS_CAN_SETUP"]) }

    private static func names(_ parameter: String?) -> [ChallengeName] {
        guard let parameter, let names = try? JSONDecoder().decode([String].self, from: Data(parameter.utf8)) else {
            return []
        }
        return names.map(ChallengeName.init(rawValue:))
    }
}

/// The answer to one challenge: the responses (USERNAME and SECRET_HASH are added by the
/// authenticator) and, when answering produced one (MFA_SETUP), a session to answer with.
public struct ChallengeAnswer: ExpressibleByDictionaryLiteral, Sendable {
    public var responses: [String: String]
    public var session: String?

    public init(responses: [String: String], session: String? = nil) {
        self.responses = responses
        self.session = session
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(responses: Dictionary(elements, uniquingKeysWith: { $1 }))
    }
}

/// A completed sign-in.
public struct SignInResult: Sendable {
    public var tokens: AuthenticationResult
    /// The username Cognito knows (USER_ID_FOR_SRP or the challenge's USERNAME).
    public var username: String
    /// The remembered device given to `signIn`, when the service refused it (forgotten elsewhere,
    /// or its password no longer matches): the sign-in was done again without it.
    public var refusedDevice: DeviceCredentials?
}

/// Drives InitiateAuth and the challenges that follow until tokens come back.
public final class Authenticator {
    public let service: CognitoService
    public let client: AppClient
    let now: () -> Date

    public init(service: CognitoService, client: AppClient, now: @escaping () -> Date = Date.init) {
        self.service = service
        self.client = client
        self.now = now
    }

    /// Signs in with a password. PASSWORD_VERIFIER is answered here; every other challenge is
    /// passed to `respond`, which returns the challenge responses (USERNAME and SECRET_HASH are
    /// added here) or throws (for example `CognitoError.unsupportedChallenge`).
    /// With a remembered `device`, DEVICE_KEY is sent and DEVICE_SRP_AUTH answered here too (see
    /// `DeviceSRP`); a device the service refuses is dropped and the sign-in made again without it.
    public func signIn(
        username: String, password: String, flow: PasswordFlow, device: DeviceCredentials? = nil,
        respond: (AuthChallenge) throws -> ChallengeAnswer
    ) throws -> SignInResult {
        guard let device else {
            return try signInOnce(username: username, password: password, flow: flow, device: nil, respond: respond)
        }
        return try withDeviceFallback(device) { device in
            try signInOnce(username: username, password: password, flow: flow, device: device, respond: respond)
        }
    }

    private func signInOnce(
        username: String, password: String, flow: PasswordFlow, device: DeviceCredentials?,
        respond: (AuthChallenge) throws -> ChallengeAnswer
    ) throws -> SignInResult {
        var parameters = ["USERNAME": username]
        parameters["DEVICE_KEY"] = device?.deviceKey
        parameters["SECRET_HASH"] = client.secretHash(for: username)
        let srp: SRPClient?
        let authFlow: String
        switch flow {
        case .srp:
            let srpClient = try SRPClient(userPoolId: client.userPoolId)
            parameters["SRP_A"] = srpClient.srpAHex
            srp = srpClient
            authFlow = "USER_SRP_AUTH"
        case .password:
            parameters["PASSWORD"] = password
            srp = nil
            authFlow = "USER_PASSWORD_AUTH"
        }
        // Starting an SRP sign-in only asks for a challenge, so it is safe to repeat. A password
        // sign-in is checked at once: a repeat after an unknown outcome counts as another
        // attempt towards the lockout, and may send another SMS or email code.
        let response = try service.initiateAuth(
            InitiateAuthRequest(authFlow: authFlow, clientId: client.clientId, authParameters: parameters),
            idempotent: srp != nil)
        return try runChallenges(
            response, username: username, srp: srp, password: password, device: device, respond: respond)
    }

    /// Continues a sign-in whose challenge was answered in an earlier process (an authenticator
    /// set up with `--mfa-setup-output json`): sends `answer` to `challenge`, then carries on.
    public func resume(
        _ challenge: AuthChallenge, with answer: ChallengeAnswer,
        respond: (AuthChallenge) throws -> ChallengeAnswer
    ) throws -> SignInResult {
        var first = true
        let response = try answerChallenge(challenge) { next in
            if first {
                first = false
                return answer
            }
            return try respond(next)
        }
        return try runChallenges(
            response, username: challenge.username, srp: nil, password: "", device: nil, respond: respond)
    }

    func runChallenges(
        _ start: AuthResponse, username: String, srp: SRPClient?, password: String,
        device: DeviceCredentials? = nil,
        respond: (AuthChallenge) throws -> ChallengeAnswer
    ) throws -> SignInResult {
        var response = start
        var knownUsername = username
        let deviceSignIn = device.map { DeviceSignIn(device: $0, now: now) }

        // Each round answers one challenge; a well-behaved service needs only a few.
        for _ in 0..<10 {
            if let tokens = response.authenticationResult {
                return SignInResult(tokens: tokens, username: knownUsername)
            }
            guard let name = response.challengeName else {
                throw CognitoError.malformed("the service answered with neither tokens nor a challenge", status: 200)
            }
            let challengeParameters = response.challengeParameters ?? [:]
            let challengeUser =
                challengeParameters["USER_ID_FOR_SRP"] ?? challengeParameters["USERNAME"] ?? knownUsername
            knownUsername = challengeUser

            if name == .passwordVerifier {
                guard let srp else {
                    throw CognitoError.malformed("PASSWORD_VERIFIER challenge outside the SRP flow", status: 200)
                }
                var answers = try passwordVerifier(srp: srp, parameters: challengeParameters, password: password)
                answers["DEVICE_KEY"] = device?.deviceKey
                answers["USERNAME"] = challengeUser
                answers["SECRET_HASH"] = client.secretHash(for: challengeUser)
                response = try service.respondToAuthChallenge(
                    RespondToAuthChallengeRequest(
                        clientId: client.clientId, challengeName: name.rawValue, session: response.session,
                        challengeResponses: answers))
            } else if let deviceSignIn, DeviceSignIn.challenges.contains(name) {
                var answers = try deviceSignIn.answer(name, parameters: challengeParameters)
                answers["USERNAME"] = challengeUser
                answers["SECRET_HASH"] = client.secretHash(for: challengeUser)
                response = try deviceSignIn.send {
                    try service.respondToAuthChallenge(
                        RespondToAuthChallengeRequest(
                            clientId: client.clientId, challengeName: name.rawValue, session: response.session,
                            challengeResponses: answers))
                }
            } else {
                response = try answerChallenge(
                    AuthChallenge(
                        name: name, parameters: challengeParameters, username: challengeUser, session: response.session),
                    respond: respond)
            }
        }
        throw CognitoError.malformed("the service kept asking challenges; sign-in abandoned", status: 200)
    }

    /// Answers one challenge through the caller; a one-time code that did not match may be
    /// retyped while the challenge session lives (the caller decides, by answering or throwing).
    private func answerChallenge(_ first: AuthChallenge, respond: (AuthChallenge) throws -> ChallengeAnswer) throws
        -> AuthResponse
    {
        var challenge = first
        while true {
            let answer = try respond(challenge)
            var responses = answer.responses
            responses["USERNAME"] = challenge.username
            responses["SECRET_HASH"] = client.secretHash(for: challenge.username)
            do {
                return try service.respondToAuthChallenge(
                    RespondToAuthChallengeRequest(
                        clientId: client.clientId, challengeName: challenge.name.rawValue,
                        session: answer.session ?? challenge.session,
                        challengeResponses: responses))
            } catch let error as CognitoError
                where error.refusal == .codeMismatch && challenge.isCodeChallenge && challenge.attempt < 5
            {
                challenge.attempt += 1
                challenge.previousError = error
            }
        }
    }

    private func passwordVerifier(srp: SRPClient, parameters: [String: String], password: String) throws -> [String:
        String]
    {
        guard let salt = parameters["SALT"], let srpB = parameters["SRP_B"],
            let secretBlock = parameters["SECRET_BLOCK"], let userId = parameters["USER_ID_FOR_SRP"]
        else {
            throw CognitoError.malformed(
                "PASSWORD_VERIFIER challenge without SALT, SRP_B, SECRET_BLOCK or USER_ID_FOR_SRP", status: 200)
        }
        let timestamp = SRPTimestamp.string(for: now())
        let signature: String
        do {
            signature = try srp.passwordClaimSignature(
                userIdForSRP: userId, password: password, saltHex: salt, srpBHex: srpB,
                secretBlock: secretBlock, timestamp: timestamp)
        } catch let error as SRPError {
            throw CognitoError.invalidInput("the service's SRP parameters were refused: \(error.message)")
        }
        return [
            "PASSWORD_CLAIM_SECRET_BLOCK": secretBlock,
            "PASSWORD_CLAIM_SIGNATURE": signature,
            "TIMESTAMP": timestamp,
        ]
    }

    /// The remembered device the service refused during the last `signIn` (set even when the
    /// sign-in made again without it failed, so the caller can drop it either way).
    public internal(set) var refusedDevice: DeviceCredentials?

    /// Set once this process has seen the service answer that it does not offer
    /// GetTokensFromRefreshToken (emulators); a later refresh goes straight to the fallback.
    private var refreshOperationMissing = false

    /// New tokens from a refresh token. GetTokensFromRefreshToken first: it works whether or not
    /// the app client rotates refresh tokens (then the answer carries a new one, which the caller
    /// must store in place of the old). Where the service does not offer it (UnknownOperationException,
    /// or moto's bare HTTP 500 page), InitiateAuth REFRESH_TOKEN_AUTH instead. After any other 5xx
    /// (a real service's passing failure, a proxy's 502 page) the fallback is tried once, but only
    /// its tokens are trusted, never its refusal: with rotation the fallback is always refused, and
    /// that must not end a live session. `username` is the name Cognito knows (the access token's
    /// `username`), since SECRET_HASH is computed over it.
    public func refresh(refreshToken: String, username: String, deviceKey: String? = nil) throws -> AuthenticationResult
    {
        if !refreshOperationMissing {
            do {
                return try getTokensFromRefreshToken(refreshToken, deviceKey: deviceKey)
            } catch let error as CognitoError where Self.operationMissing(error) {
                do {
                    let tokens = try refreshTokenAuth(
                        refreshToken: refreshToken, username: username, deviceKey: deviceKey)
                    refreshOperationMissing = true
                    return tokens
                } catch let refusal as CognitoError where Self.fallbackNotAllowed(refusal) {
                    // REFRESH_TOKEN_AUTH is refused as a flow (the client rotates refresh tokens, or
                    // the flow is disabled), not the token: so the service does offer
                    // GetTokensFromRefreshToken, and its failure was a passing one.
                    throw error
                }
            } catch let error as CognitoError where error.isServerError {
                if let tokens = try? refreshTokenAuth(
                    refreshToken: refreshToken, username: username, deviceKey: deviceKey)
                {
                    return tokens
                }
                throw error
            }
        }
        return try refreshTokenAuth(refreshToken: refreshToken, username: username, deviceKey: deviceKey)
    }

    static func operationMissing(_ error: CognitoError) -> Bool {
        if error.refusal == .operationUnsupported { return true }
        return error.kind == .malformedResponse && error.httpStatus == 500
    }

    /// A refusal of the REFRESH_TOKEN_AUTH flow itself (rotation enabled on the app client, or the
    /// flow not enabled for it), as opposed to a refusal of the refresh token.
    static func fallbackNotAllowed(_ error: CognitoError) -> Bool {
        error.refusal == .invalidParameter || error.refusal == .flowNotAllowed
    }

    private func getTokensFromRefreshToken(_ refreshToken: String, deviceKey: String?) throws -> AuthenticationResult {
        // Not repeated after an unknown outcome: with rotation the first call may have used the token up.
        let response: AuthResponse = try service.call(
            "GetTokensFromRefreshToken",
            GetTokensFromRefreshTokenRequest(
                refreshToken: refreshToken, clientId: client.clientId, clientSecret: client.clientSecret,
                deviceKey: deviceKey),
            idempotent: false)
        guard let tokens = response.authenticationResult else {
            throw CognitoError.malformed("the service answered a refresh with no tokens", status: 200)
        }
        return tokens
    }

    /// InitiateAuth REFRESH_TOKEN_AUTH. The answer has no refresh token.
    public func refreshTokenAuth(refreshToken: String, username: String, deviceKey: String? = nil) throws
        -> AuthenticationResult
    {
        var parameters = ["REFRESH_TOKEN": refreshToken]
        parameters["DEVICE_KEY"] = deviceKey
        parameters["SECRET_HASH"] = client.secretHash(for: username)
        let response = try service.initiateAuth(
            InitiateAuthRequest(authFlow: "REFRESH_TOKEN_AUTH", clientId: client.clientId, authParameters: parameters),
            idempotent: true)
        guard let tokens = response.authenticationResult else {
            if let name = response.challengeName { throw CognitoError.unsupportedChallenge(name) }
            throw CognitoError.malformed("the service answered a refresh with no tokens", status: 200)
        }
        return tokens
    }
}

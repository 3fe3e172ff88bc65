#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The first factors of choice-based sign-in (AuthFlow USER_AUTH), by their challenge names.
public enum FirstFactor: String, Sendable, CaseIterable {
    case emailOTP = "EMAIL_OTP"
    case smsOTP = "SMS_OTP"
    /// The password, sent (over TLS) to the service.
    case password = "PASSWORD"
    /// The password proven with SRP: it never leaves the machine.
    case passwordSRP = "PASSWORD_SRP"
    /// A passkey: needs a browser (WebAuthn), which this client cannot be.
    case webAuthn = "WEB_AUTHN"

    public var needsPassword: Bool { self == .password || self == .passwordSRP }

    /// The challenge name the service offers this factor by (SELECT_CHALLENGE's AvailableChallenges).
    public var challengeName: ChallengeName { ChallengeName(rawValue: rawValue) }

    /// The factor `name` stands for, if it is one.
    public init?(_ name: ChallengeName) { self.init(rawValue: name.rawValue) }
}

/// What a USER_AUTH sign-in asks of its caller, each only when needed.
public struct UserAuthHandlers {
    /// Picks one of the first factors SELECT_CHALLENGE offers (AvailableChallenges, in the
    /// service's order, unknown names included), by its challenge name.
    public var choose: ([ChallengeName]) throws -> ChallengeName
    /// The password, asked only when a password factor is used (once, however often needed).
    public var password: () throws -> String
    /// Every challenge after the first factor (one-time codes, MFA, a new password).
    public var respond: (AuthChallenge) throws -> ChallengeAnswer

    public init(
        choose: @escaping ([ChallengeName]) throws -> ChallengeName, password: @escaping () throws -> String,
        respond: @escaping (AuthChallenge) throws -> ChallengeAnswer
    ) {
        self.choose = choose
        self.password = password
        self.respond = respond
    }
}

extension Authenticator {
    /// Choice-based sign-in (InitiateAuth USER_AUTH). With `preferred`, PREFERRED_CHALLENGE asks for
    /// that factor at once (with PASSWORD or SRP_A when it needs the password); without it, or when
    /// the service does not offer it, SELECT_CHALLENGE is answered with the caller's choice.
    /// PASSWORD_VERIFIER is answered here; one-time codes and anything after go to `respond`.
    public func signInUserAuth(username: String, preferred: FirstFactor?, handlers: UserAuthHandlers) throws
        -> SignInResult
    {
        var knownPassword: String?
        let password = { () throws -> String in
            if let knownPassword { return knownPassword }
            let typed = try handlers.password()
            knownPassword = typed
            return typed
        }
        var parameters = ["USERNAME": username]
        parameters["SECRET_HASH"] = client.secretHash(for: username)
        var srp: SRPClient?
        if let preferred {
            parameters["PREFERRED_CHALLENGE"] = preferred.rawValue
            srp = try addFirstFactor(preferred.rawValue, to: &parameters, password: password)
        }
        // Never repeated after an unknown outcome: a one-time-code factor sends a code at once,
        // and a password is checked at once (a repeat counts towards the lockout).
        var response = try service.initiateAuth(
            InitiateAuthRequest(authFlow: "USER_AUTH", clientId: client.clientId, authParameters: parameters),
            idempotent: false)
        var challengeUser = username
        if response.challengeName == .selectChallenge {
            let offered = response.availableChallenges ?? []
            guard !offered.isEmpty else {
                throw CognitoError.malformed("SELECT_CHALLENGE offered no AvailableChallenges", status: 200)
            }
            let choice = try handlers.choose(offered)
            guard offered.contains(choice) else {
                throw CognitoError.invalidInput(
                    "\(choice) is not one of the offered first factors (\(offered.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            challengeUser = response.challengeParameters?["USERNAME"] ?? username
            var answers = ["ANSWER": choice.rawValue, "USERNAME": challengeUser]
            answers["SECRET_HASH"] = client.secretHash(for: challengeUser)
            srp = try addFirstFactor(choice.rawValue, to: &answers, password: password)
            response = try service.respondToAuthChallenge(
                RespondToAuthChallengeRequest(
                    clientId: client.clientId, challengeName: "SELECT_CHALLENGE", session: response.session,
                    challengeResponses: answers))
        }
        return try runChallenges(
            response, username: challengeUser, srp: srp, password: knownPassword ?? "",
            respond: handlers.respond)
    }

    /// Adds what a first factor carries from the start (PASSWORD, or SRP_A) to `parameters`;
    /// returns the SRP client whose PASSWORD_VERIFIER will follow.
    private func addFirstFactor(
        _ name: String, to parameters: inout [String: String],
        password: () throws -> String
    ) throws -> SRPClient? {
        switch FirstFactor(rawValue: name) {
        case .password?:
            parameters["PASSWORD"] = try password()
            return nil
        case .passwordSRP?:
            _ = try password()  // asked before anything is sent, never between SRP_A and the verifier
            let srpClient = try SRPClient(userPoolId: client.userPoolId)
            parameters["SRP_A"] = srpClient.srpAHex
            return srpClient
        default:
            return nil
        }
    }
}

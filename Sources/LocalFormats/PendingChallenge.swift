import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A sign-in that waits in the Secret Service for a one-time code given to a second process
/// (`authctl signin --code CODE`): an authenticator set-up handed to a script
/// (`--mfa-setup-output json`), or a code sent by text message or email where no one could be
/// asked. The session is a credential for its 3 minutes, so it is never kept in a file. Its JSON
/// is written and read with `StoredSession.encoder` / `decoder`.
public struct PendingChallenge: Codable, Equatable, Sendable {
    /// MFA_SETUP, SMS_MFA, SMS_OTP or EMAIL_OTP.
    public var challengeName: ChallengeName
    /// The challenge session (for MFA_SETUP: AssociateSoftwareToken's, then VerifySoftwareToken's).
    public var session: String
    /// The username Cognito knows (answers carry it).
    public var username: String
    /// The name the person gave (an alias, an email), when it differs.
    public var typedUsername: String?
    public var userPoolId: String
    public var clientId: String
    public var expiresAt: Date
    /// Where the code went (`+*******1234`).
    public var destination: String?
    /// MFA_SETUP: VerifySoftwareToken already accepted a code; only the challenge answer is left.
    public var verified: Bool
    /// Codes refused so far (the service ends the challenge after a few).
    public var wrongCodes: Int

    public init(
        challengeName: ChallengeName, session: String, username: String, typedUsername: String?,
        userPoolId: String, clientId: String, expiresAt: Date, destination: String?, verified: Bool,
        wrongCodes: Int
    ) {
        self.challengeName = challengeName
        self.session = session
        self.username = username
        self.typedUsername = typedUsername
        self.userPoolId = userPoolId
        self.clientId = clientId
        self.expiresAt = expiresAt
        self.destination = destination
        self.verified = verified
        self.wrongCodes = wrongCodes
    }

    public func isExpired(now: Date) -> Bool { expiresAt <= now }

    /// The names this pending sign-in answers to.
    public func isFor(username name: String) -> Bool {
        name == username || name == typedUsername
    }

    public var displayName: String { typedUsername ?? username }
}

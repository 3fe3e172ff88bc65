import CognitoClient
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What every flow and challenge answerer of one sign-in shares: the settings and app client, the
/// service, the console, the profile's store, the answers the person gave up front (`--code`,
/// `--mfa-type`, `--method`, `--password-stdin`) and what the sign-in learns on the way (the name
/// typed, the password read, wrong codes). Made once per sign-in by `SignInPipeline.prepare` from
/// the command's `SignInRequest` (whose answers are read from `request`, not copied here); what it
/// learns on the way is the pipeline's alone (internal).
package final class SignInContext {
    /// The profile's session service the sign-in is for (its settings, store and transport).
    package let session: ProfileSession
    package var commandContext: CommandContext { session.context }
    package var settings: Settings { session.settings }
    /// The app client's settings, made once per sign-in.
    package let client: ClientSettings
    package let appClient: AppClient
    /// The sign-in as asked for.
    package let request: SignInRequest
    /// The profile's store (a pending sign-in waits there, even with `--no-store`, which keeps no session).
    package let store: ProfileStore
    /// Remembered devices (nil: none sent, none confirmed).
    package let devices: RememberedDevices?

    /// The name the person gave, for the authenticator's label and a pending sign-in.
    var typedUsername: String?
    /// The password once read (a new one must differ from it).
    var password: String?
    /// Codes refused in this sign-in (and in the earlier runs of a pending one), to tell "too many
    /// wrong codes" from "too slow" when the service ends the challenge session.
    var wrongCodes = 0
    /// False when finishing a pending sign-in, which cannot ask for a new password.
    var canSetNewPassword = true
    /// The sign-in runs at the replica (after the primary did not answer: `SignInPipeline`).
    var atReplica = false
    /// How the sign-in stopped short of a session (the authenticator secret handed to a script, a
    /// code awaited by a later run), set by the answerer that stopped it.
    var stopped: SignInOutcome?
    /// The primary's requests, watched for an outage.
    private var witness: OutageWitness?
    /// What the primary's outage was, if it had one.
    package var primaryOutage: String? { witness?.outage }

    init(
        session: ProfileSession, client: ClientSettings, appClient: AppClient, request: SignInRequest,
        devices: RememberedDevices?
    ) {
        self.session = session
        self.client = client
        self.appClient = appClient
        self.request = request
        self.store = session.store
        self.devices = devices
    }

    /// Ends the sign-in short of a session, as `outcome` says: the answerer that calls it returns
    /// nothing to the service, and `SignInPipeline.run` hands the outcome to the command.
    func stop(_ outcome: SignInOutcome) -> Error {
        stopped = outcome
        return SignInStopped()
    }

    package var console: Console { commandContext.console }
    package var profile: String { settings.profile }
    package func now() -> Date { commandContext.now() }

    /// The user pool's service (one transport per process): the primary's, watched for an
    /// outage, or the replica's once the sign-in failed over.
    package func service() throws -> CognitoService {
        if atReplica, let replica = client.atReplica() { return try commandContext.service(client: replica) }
        guard client.replica != nil else { return try commandContext.service(client: client) }
        let witness = try witness ?? OutageWitness(commandContext.transport())
        self.witness = witness
        // One attempt at the primary: its outage is the replica's turn, within the same budget.
        var once = try commandContext.retryPolicy
        once.maxAttempts = 1
        return CognitoService(endpoint: client.endpoint, transport: witness, retryPolicy: once)
    }

    /// The session a sign-in's tokens make, for this profile and client.
    package func session(from result: SignInResult) throws -> StoredSession {
        try StoredSession(
            tokens: result.tokens, fallbackUsername: result.username, profile: profile, client: client, now: now())
    }

    /// Answers `challenge` with its answerer (`ChallengeTable`).
    package func answer(_ challenge: AuthChallenge) throws -> ChallengeAnswer {
        try ChallengeTable.answer(challenge, in: self)
    }

    /// A new password for NEW_PASSWORD_REQUIRED: asked twice on the terminal, or the second line
    /// of standard input with `--password-stdin`.
    package func readNewPassword() throws -> String {
        guard canSetNewPassword else {
            throw AuthctlError(.usage, "a new password cannot be set here; run authctl signin")
        }
        if !request.passwordFromStdin { console.message("This account must choose a new password.") }
        return try NewPasswordReader.read(
            console: console, fromStdin: request.passwordFromStdin, current: password,
            stdinMissing: "this account must set a new password: give it as the second line of standard input")
    }

    /// The password: the first line of standard input, or asked without echo.
    package func readPassword(for username: String) throws -> String {
        if !request.passwordFromStdin && !console.canPrompt {
            throw AuthctlError(
                .usage, "no terminal to ask for the password: pipe it on standard input with --password-stdin")
        }
        let read: String? =
            request.passwordFromStdin ? console.readLine() : console.prompt("Password for \(username): ", secret: true)
        guard let read, !read.isEmpty else {
            throw AuthctlError(
                .usage,
                request.passwordFromStdin ? "--password-stdin: standard input locked no password" : "no password given")
        }
        password = read
        return read
    }
}

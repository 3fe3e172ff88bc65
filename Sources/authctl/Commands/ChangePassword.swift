import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct ChangePassword: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "change-password",
        abstract: "Change the signed-in user's password; this device stays signed in.",
        discussion: """
            On a terminal, asks for the current password, the new one and a confirmation, none echoed. \
            With --stdin, the current and the new password are the first two lines of standard input. \
            Other devices stay signed in, unless --sign-out-others: then every session of the user is \
            signed out (GlobalSignOut) and this device signs in again with the new password, so only it \
            stays signed in (a second factor may be asked on the terminal).
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Read the current and the new password from the first two lines of standard input.")
    var stdin = false

    @Flag(
        help: "Sign out every other session too (GlobalSignOut), then sign this device in again with the new password.")
    var signOutOthers = false

    func execute(in context: CommandContext) throws {
        let settings = try context.settings
        let console = context.console
        if !stdin && !console.inputIsTerminal {
            throw AuthctlError(
                .usage,
                "no terminal to ask for the passwords: give the current and the new password as two lines on standard input with --stdin"
            )
        }
        let sessions = try context.profileSession
        // Fail on "not signed in" before asking for any password.
        let signedIn = try sessions.signedIn()

        let (current, proposed) = try readPasswords(console)
        try NewPasswordRules.check(proposed, current: current)

        // An access token refused as expired is refreshed and the change asked once more (the
        // refused request changed nothing); one refused otherwise ends the session. A plain
        // NotAuthorizedException is the current password here, not the session.
        let policy = SessionPolicy(
            at: .changePassword,
            otherRefusal: { Self.failure($0, endpoint: $1.endpoint, mayHaveActed: $0.outcomeUnknown) })
        _ = try sessions.withFreshSession(minValidity: 60, policy: policy) { session, service in
            try service.changePassword(accessToken: session.accessToken, previous: current, proposed: proposed)
        }
        guard signOutOthers else {
            context.emit(ChangePasswordReport(changed: true, signedIn: true, otherDevicesSignedOut: false))
            return
        }
        try signOutOthersAndSignInAgain(
            sessions, username: signedIn.username, password: proposed,
            settings: settings, context: context)
    }

    /// GlobalSignOut (every refresh token of the user, this device's too), then a new sign-in of
    /// this device with the new password through the sign-in pipeline, which keeps it.
    private func signOutOthersAndSignInAgain(
        _ sessions: ProfileSession, username: String, password: String,
        settings: Settings, context: CommandContext
    ) throws {
        do {
            try sessions.withFreshSession(minValidity: 60) { session, service in
                try service.globalSignOut(accessToken: session.accessToken)
            }
        } catch {
            let failure = AuthctlError.from(error)
            throw AuthctlError(
                failure.code,
                "The password was changed, but the other sessions could not be signed out: \(failure.message)\nThey stay signed in; run: authctl signout --global"
            )
        }
        do {
            let request = SignInRequest(username: username, method: .password(.srp), password: .known(password))
            _ = try sessions.signIn(request).session()
        } catch {
            // Every session, this one included, was signed out: what is kept here is of no use.
            _ = sessions.remove()
            let failure = AuthctlError.from(error)
            throw AuthctlError(
                failure.code,
                "The password was changed and every session signed out, but signing this device in again failed: \(failure.message)\nRun: authctl signin"
            )
        }
        context.emit(ChangePasswordReport(changed: true, signedIn: true, otherDevicesSignedOut: true))
    }

    private func readPasswords(_ console: Console) throws -> (current: String, proposed: String) {
        if stdin {
            guard let current = console.readLine(), !current.isEmpty else {
                throw AuthctlError(.usage, "--stdin: the first line (the current password) is missing")
            }
            guard let proposed = console.readLine() else {
                throw AuthctlError(.usage, "--stdin: the second line (the new password) is missing")
            }
            return (current, proposed)
        }
        guard let current = console.prompt("Current password: ", secret: true), !current.isEmpty else {
            throw AuthctlError(.usage, "no current password given")
        }
        guard let proposed = console.prompt("New password: ", secret: true),
            let confirmation = console.prompt("Repeat new password: ", secret: true)
        else {
            throw AuthctlError(.usage, "no new password given")
        }
        guard proposed == confirmation else {
            throw AuthctlError(.inputRejected, "Passwords do not match")
        }
        return (current, proposed)
    }

    static func failure(_ error: CognitoError, endpoint: String, mayHaveActed: Bool) -> AuthctlError {
        if let refused = RefusalTable.failure(error, at: .changePassword) { return refused }
        let failure = AuthctlError.from(error, endpoint: endpoint)
        if mayHaveActed {
            // The answer was lost (timeout, dropped connection, HTTP 5xx): the change may have been made.
            return AuthctlError(
                failure.code,
                "\(failure.message)\nThe answer was lost, so the password may or may not have been changed; try signing in with the new one (if it is refused, the current one still works). This device stays signed in."
            )
        }
        return failure
    }
}

struct ChangePasswordReport: CommandReport {
    var changed: Bool
    var signedIn: Bool
    var otherDevicesSignedOut: Bool

    var textMessages: [String] {
        if otherDevicesSignedOut {
            return ["Password changed; every other session was signed out and this device signed in again."]
        }
        return [
            "Password changed. You are still signed in.",
            "Other devices stay signed in; if the old password may be known to someone else, run: authctl signout --global",
        ]
    }
}

import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct SignOut: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "signout",
        abstract:
            "Sign out of this device, of every other device (--others), of every device (--global), or force a user out (--global --user).",
        discussion: """
            Without options: revokes this device's refresh token and deletes the stored session; \
            other devices stay signed in (--with-linked also ends the managed-login session it came \
            through). --others ends every other session of the user (RevokeUserSession for each, \
            the pool's session tracking) and keeps this one; one session: `authctl sessions revoke ID`. \
            --global ends the user's sessions on every device \
            (GlobalSignOut). --global --user NAME is for operators: AdminUserGlobalSignOut, \
            signed with AWS credentials from the environment or ~/.aws/credentials; it needs \
            no stored session and leaves this device's store alone.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(name: .customLong("global"), help: "End the sessions on every device, not only this one.")
    var everywhere = false

    @Option(
        help: ArgumentHelp(
            "With --global: force this user of the pool out (needs AWS credentials).", valueName: "username"))
    var user: String?

    @Flag(
        help:
            "End every other session of the user (each device, each managed-login session) and keep this one (needs the pool's session tracking)."
    )
    var others = false

    @Flag(
        help:
            "This device: also end the managed-login (SSO) session the session came through (RevokeToken with RevokeAssociatedSessions LINKED)."
    )
    var withLinked = false

    @Flag(
        name: .shortAndLong,
        help: "Do not ask for confirmation (required without a terminal for --global and --others).")
    var yes = false

    @Flag(
        help:
            "Also forget this machine's remembered device on Cognito (ForgetDevice) and here, so the next sign-in asks for MFA again. Without it the device stays remembered, as it does on the service."
    )
    var forgetDevice = false

    @Flag(
        help:
            "For a browser session: also open the managed login's logout URL, which ends the browser's own sign-in (waits up to 30 s for the browser to come back to http://localhost:N/signed-out)."
    )
    var browser = false

    func validate() throws {
        if others && (everywhere || user != nil || forgetDevice || browser || withLinked) {
            throw ValidationError(
                "--others ends the other sessions and keeps this one: not with --global, --user, --forget-device, --browser or --with-linked."
            )
        }
        if withLinked && (everywhere || user != nil) {
            throw ValidationError("--with-linked is for this device's sign-out: not with --global or --user.")
        }
        if user != nil && !everywhere {
            throw ValidationError("--user forces a user out of every session: use it with --global.")
        }
        if user != nil && forgetDevice {
            throw ValidationError(
                "--forget-device forgets this machine's device: not with --user (see `authctl devices forget --user`).")
        }
    }

    func execute(in context: CommandContext) throws {
        let settings = try context.settings
        if let user {
            try AdminSignOut(settings: settings, username: user, confirmed: yes).run(in: context)
            return
        }
        if others { return try otherSessions(context) }
        // First: ForgetDevice needs the session's access token, which signing out ends.
        let device = forgetDevice ? forgetThisDevice(context, settings, try context.profileSession) : .skipped
        if everywhere {
            try globalSignOut(context, settings, device: device)
        } else {
            try localSignOut(context, settings, device: device)
        }
    }

    // MARK: this device

    private func localSignOut(_ context: CommandContext, _ settings: Settings, device: SignOutReport.Outcome) throws {
        let sessions = try context.profileSession
        var revokeOutcome = SignOutReport.Outcome.ok
        let outcome = try sessions.signOutLocally { session in
            do {
                try sessions.revoke(session, linked: withLinked)
                return true
            } catch {
                revokeOutcome = .failed
                let reason = AuthctlError.from(error).message
                if (error as? CognitoError)?.outcomeUnknown ?? false {
                    context.console.message(
                        "authctl: warning: the refresh token may not have been revoked (\(reason)): the request may or may not have reached Cognito; if it did not, the token stays usable until it expires."
                    )
                } else {
                    context.console.message(
                        "authctl: warning: the refresh token could not be revoked (\(reason)); it stays usable until it expires."
                    )
                }
                return false
            }
        }
        let report: SignOutReport
        let failure: AuthctlError?
        var logoutURI: String?
        switch outcome {
        case .notSignedIn:
            report = SignOutReport(
                signedOutLocally: false, globalSignOut: .skipped, revokeToken: .skipped, exposureUntil: nil)
            failure = nil
        case .unreadable(let removal):
            context.console.message(
                "authctl: warning: the stored session for profile \(settings.profile) is unreadable; nothing could be revoked with it, so its refresh token (if any) stays usable until it expires."
            )
            report = SignOutReport(
                signedOutLocally: removal == nil, globalSignOut: .skipped, revokeToken: .failed, exposureUntil: nil)
            failure = removal.map { Self.notRemoved($0, what: "The unreadable session") }
        case .signedOut(let session, let revoked, let removal):
            report = SignOutReport(
                signedOutLocally: removal == nil, globalSignOut: .skipped, revokeToken: revokeOutcome,
                exposureUntil: session.tokensValidUntil, logoutUrl: session.managedLoginLogoutURL)
            logoutURI = session.logoutURI
            failure = removal.map {
                Self.notRemoved($0, what: revoked ? "The session (its refresh token is revoked)" : "The session")
            }
        }
        var text: [String] = []
        if !report.signedOutLocally && failure == nil {
            text.append("Not signed in (profile \(settings.profile))")
        } else {
            if report.signedOutLocally {
                text.append("Signed out of this device (profile \(settings.profile)). Other devices stay signed in.")
            }
            if let until = report.exposureUntil {
                text.append(
                    "Access and id tokens already issued keep passing offline JWT checks until \(Format.localTime(until))."
                )
            }
        }
        context.emit(device, report.saying(text))
        if let logoutUrl = report.logoutUrl {
            ManagedLogout.offer(logoutUrl, returningTo: logoutURI, open: browser, context: context)
        }
        if let failure { throw failure }
    }

    // MARK: every other device

    /// `--others`: RevokeUserSession for every session but this one (and the managed-login
    /// session this one came through, which is this device's browser's).
    private func otherSessions(_ context: CommandContext) throws {
        let owner = UserSessions(context: context, sessions: try context.profileSession)
        let (session, listing) = try owner.list()
        guard case .tracked(let found) = listing else {
            throw AuthctlError(
                .configuration,
                UserSessions.trackingOffMessage(pool: session.userPoolId)
                    + ". Without it: `authctl signout --global` ends every session, this one included.")
        }
        let current = found.first { $0.isCurrentSession == true }
        guard let current else {
            throw AuthctlError(
                .unexpected,
                "Cognito's list of sessions does not mark this one as current, so authctl cannot tell which to keep; nothing was ended."
            )
        }
        let keep = Set([current.validId, current.originSessionId].compactMap { $0 })
        let ends = found.compactMap(\.validId).filter { !keep.contains($0) }
        if !ends.isEmpty {
            try Confirmation.require(
                "End \(ends.count) other session\(ends.count == 1 ? "" : "s") of \(session.username), keeping this one? [y/N] ",
                confirmed: yes, console: context.console,
                withoutTerminal: "this signs out every other device and cannot be undone")
        }
        let report = SessionRevokeReport(
            user: session.username, userPoolId: session.userPoolId,
            results: try owner.revoke(ends, linked: false), lifetime: session.tokenLifetime,
            now: context.now())
        context.emit(report)
        if let failure = report.failure { throw failure }
    }

    // MARK: every device

    private func globalSignOut(_ context: CommandContext, _ settings: Settings, device: SignOutReport.Outcome) throws {
        let sessions = try context.profileSession
        let stored: StoredSession
        switch try sessions.item(of: settings.profile) {
        case .none:
            throw SessionError.notSignedIn(profile: settings.profile)
        case .unreadable:
            // Nothing to confirm: no request can be made with it, and an unusable item must not stay.
            let removal = sessions.remove()
            context.emit(
                device,
                SignOutReport(
                    signedOutLocally: removal == nil, globalSignOut: .failed, revokeToken: .skipped, exposureUntil: nil)
            )
            if let removal { throw Self.notRemoved(removal, what: "The unreadable session") }
            throw AuthctlError(
                .notAuthorized,
                """
                the stored session for profile \(settings.profile) is unreadable, so nothing could be revoked with it and \
                other devices were not signed out; it was removed from this device. \(Self.howToSignOutEverywhere(username: nil))
                """)
        case .session(let loaded):
            stored = loaded
        }
        try Confirmation.require(
            "Sign out \(stored.username) on ALL devices? [y/N] ", confirmed: yes, console: context.console)

        // Whether a GlobalSignOut request of this command may have been performed without a clear answer.
        var mayHaveActed = false
        let session: StoredSession
        do {
            // An expired access token must not make global sign-out fail: refreshed first, and once
            // more when the service refuses it as expired. A refusal that ends the session is
            // handed back: this command ends it, saying what was and was not revoked.
            let policy = SessionPolicy(onEndingRefusal: .handBack)
            let outcome = try sessions.withFreshSession(minValidity: 60, policy: policy) { session, service in
                do {
                    // At the replica when the primary does not answer (a sign-out is no directory write).
                    try sessions.failingOver(
                        "signing out every device", client: try sessions.clientSettings(for: session),
                        primary: service
                    ) { service, _, _ in
                        try service.globalSignOut(accessToken: session.accessToken)
                    }
                    return session
                } catch let error as CognitoError {
                    // Remembered across the retry after a refresh: the first request may have done it.
                    if error.outcomeUnknown { mayHaveActed = true }
                    throw error
                }
            }
            switch outcome {
            case .completed(let signedOut):
                session = signedOut
            case .refused(let error, _):
                return try deadSession(
                    context, device, sessions, stored, refusal: error, earlierAttemptMayHaveActed: mayHaveActed)
            }
        } catch SessionError.ended {
            return try deadSession(
                context, device, sessions, stored, refusal: nil, earlierAttemptMayHaveActed: mayHaveActed)
        } catch {
            context.emit(device, SignOutReport.failedAndKept)
            throw Self.notSignedOut(AuthctlError.from(error), mayHaveActed: mayHaveActed)
        }

        let exposure = Self.exposure(of: session, now: context.now())
        if let removal = sessions.remove() {
            context.emit(
                device,
                SignOutReport(
                    signedOutLocally: false, globalSignOut: .ok, revokeToken: .skipped, exposureUntil: exposure))
            throw Self.notRemoved(
                removal, what: "Signed \(session.username) out of every device, but the session (which no longer works)"
            )
        }
        finish(
            context, device,
            SignOutReport(signedOutLocally: true, globalSignOut: .ok, revokeToken: .skipped, exposureUntil: exposure),
            note: "Signed \(session.username) out of every device.", lifetime: session.tokenLifetime)
    }

    /// The service refused this device's session (`refusal`), or the refresh token was refused
    /// (nil): the session is removed here, since a dead session must not stay. Whether the other
    /// devices are signed out cannot be told from here, unless the user no longer exists or a
    /// request of this command may have done it before its answer was lost.
    private func deadSession(
        _ context: CommandContext, _ device: SignOutReport.Outcome, _ sessions: ProfileSession, _ stored: StoredSession,
        refusal: CognitoError?, earlierAttemptMayHaveActed: Bool
    ) throws {
        let exposure = Self.exposure(of: stored, now: context.now())
        let removal = sessions.remove()
        let reason = refusal.map { $0.message } ?? "its tokens were refused"
        let ended: String?
        if let refusal, refusal.refusal == .userNotFound {
            ended =
                "Cognito says \(stored.username) no longer exists in \(stored.userPoolId) (\(refusal.message)): no device can use or refresh its tokens any more."
        } else if earlierAttemptMayHaveActed {
            ended =
                "A GlobalSignOut request of this command got no clear answer, and Cognito then refused this session (\(reason)): most likely that request signed \(stored.username) out of every device."
        } else {
            ended = nil
        }
        // The session has ended (exit 0, "already-ended", as the issue specifies: the person is
        // not left signed in with a dead session, and a script sees a session that is over). What
        // cannot be told from here is said: a refusal alone does not prove other devices are out.
        let report = SignOutReport(
            signedOutLocally: removal == nil, globalSignOut: .alreadyEnded,
            revokeToken: .skipped, exposureUntil: exposure)
        if let removal {
            context.emit(device, report)
            throw Self.notRemoved(removal, what: (ended.map { $0 + " " } ?? "") + "The dead session")
        }
        let note =
            ended.map { $0 + " The session was removed from this device." } ?? """
                The session had already ended: Cognito refused it (\(reason)); it was removed from this device. \
                It was revoked on this device alone or on every device, and authctl cannot tell which, so other devices \
                may still be signed in. \(Self.howToSignOutEverywhere(username: stored.username))
                """
        finish(context, device, report, note: note, lifetime: stored.tokenLifetime)
    }

    static func howToSignOutEverywhere(username: String?) -> String {
        "To sign out every device: sign in again and run `authctl signout --global`, or ask an operator to run "
            + "`authctl signout --global --user \(username ?? "NAME")`."
    }

    /// A global sign-out's report with its explanation (`note`) and the exposure window.
    private func finish(
        _ context: CommandContext, _ device: SignOutReport.Outcome, _ report: SignOutReport, note: String,
        lifetime: Double
    ) {
        var text = [note]
        if let until = report.exposureUntil {
            text.append(
                "Access and id tokens already issued on any device keep passing offline JWT checks (API Gateway, other services) for up to \(Format.duration(lifetime)): until \(Format.localTime(until)) at the latest."
            )
        }
        // The explanation of an already-ended session is for the person, on stderr, in JSON mode too.
        context.emit(device, report.saying(text, inJSON: report.globalSignOut == .alreadyEnded ? [note] : []))
    }

    /// A failed global sign-out keeps the session here and says what is still possible. When a
    /// request may have reached the service (timeout, dropped connection, HTTP 5xx) its outcome is unknown.
    static func notSignedOut(_ error: AuthctlError, mayHaveActed: Bool) -> AuthctlError {
        switch error.code {
        case .unavailable, .throttled, .unexpected:
            if mayHaveActed {
                return AuthctlError(
                    error.code,
                    "\(error.message)\nThe request may have reached Cognito, so the sessions may or may not have been revoked: other devices may still be signed in. This device's session is kept. Run `authctl signout --global` again (repeating it is harmless), or `authctl signout` to sign out of this device only."
                )
            }
            return AuthctlError(
                error.code,
                "\(error.message)\nNothing was revoked; you are still signed in on every device, this one included. To sign out of this device only: authctl signout"
            )
        default:
            return error
        }
    }

    // MARK: this machine's device

    /// `--forget-device`: ForgetDevice for the remembered device of the session's user, then its
    /// keys here. A failure is said and the sign-out goes on (the session must still end).
    private func forgetThisDevice(
        _ context: CommandContext, _ settings: Settings,
        _ sessions: ProfileSession
    ) -> SignOutReport.Outcome {
        let devices = RememberedDevices(context: context, profile: settings.profile)
        do {
            guard let session = try sessions.stored(),
                let mine = devices.device(userPoolId: session.userPoolId, username: session.username)
            else {
                context.console.message(
                    "No remembered device of this profile's user on this machine: nothing to forget.")
                return .skipped
            }
            try sessions.withFreshSession { session, service in
                do {
                    try service.forgetDevice(accessToken: session.accessToken, deviceKey: mine.deviceKey)
                } catch let error as CognitoError where error.refusal == .resourceNotFound {
                    // Forgotten already (elsewhere): its keys here are useless, removed below.
                }
            }
            try devices.store.forget(mine)
            context.console.message(
                "Forgot this device (\(mine.deviceKey)) on Cognito and here: the next sign-in asks for MFA again.")
            return .ok
        } catch {
            context.console.message(
                "authctl: warning: this device could not be forgotten (\(AuthctlError.from(error).message)); it stays remembered."
            )
            return .failed
        }
    }

    // MARK: the stored item

    static func notRemoved(_ removal: Error, what: String) -> AuthctlError {
        let error = AuthctlError.from(removal)
        return AuthctlError(
            error.code,
            "\(what) could not be removed from this device's keyring: \(error.message). Run `authctl signout` again once the keyring works."
        )
    }

    /// Tokens issued now, on another device, pass offline checks for the tokens' lifetime: the
    /// window is now plus that lifetime, not this device's own expiry.
    static func exposure(of session: StoredSession, now: Date) -> Date {
        max(now.addingTimeInterval(session.tokenLifetime), session.tokensValidUntil)
    }
}

/// `signout --output json`; the exit code agrees with it.
struct SignOutReport: CommandReport {
    enum Outcome: String, Encodable {
        case ok, failed, skipped
        case alreadyEnded = "already-ended"
    }

    var signedOutLocally: Bool
    var globalSignOut: Outcome
    var revokeToken: Outcome
    @Nullable var exposureUntil: Date?
    /// `--forget-device`: ForgetDevice and the local keys (skipped without the flag).
    var forgetDevice: Outcome = .skipped
    /// A browser session's managed-login logout URL (absent for a password session).
    var logoutUrl: String? = nil
    /// For the person: messages in text mode, and those also given in JSON mode. A report of a
    /// failure says nothing here (the error does).
    var textMessages: [String] = []
    var jsonMessages: [String] = []

    enum CodingKeys: String, CodingKey {
        case signedOutLocally, globalSignOut, revokeToken, exposureUntil, logoutUrl, forgetDevice
    }

    func saying(_ text: [String], inJSON: [String] = []) -> SignOutReport {
        var report = self
        report.textMessages = text
        report.jsonMessages = inJSON
        return report
    }
}

extension CommandContext {
    /// A sign-out's report with the outcome of `--forget-device`.
    func emit(_ device: SignOutReport.Outcome, _ report: SignOutReport) {
        var report = report
        report.forgetDevice = device
        emit(report)
    }
}

extension SignOutReport {
    /// A global sign-out that failed with the session kept here.
    static var failedAndKept: SignOutReport {
        SignOutReport(signedOutLocally: false, globalSignOut: .failed, revokeToken: .skipped, exposureUntil: nil)
    }
}

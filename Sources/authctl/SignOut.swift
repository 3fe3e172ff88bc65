import ArgumentParser
import CognitoClient
import Foundation

struct SignOut: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "signout",
        abstract: "Sign out of this device, of every device (--global), or force a user out (--global --user).",
        discussion: """
            Without options: revokes this device's refresh token and deletes the stored session; \
            other devices stay signed in. --global ends the user's sessions on every device \
            (GlobalSignOut). --global --user NAME is for operators: AdminUserGlobalSignOut, \
            signed with AWS credentials from the environment or ~/.aws/credentials; it needs \
            no stored session and leaves this device's store alone.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(name: .customLong("global"), help: "End the sessions on every device, not only this one.")
    var everywhere = false

    @Option(help: ArgumentHelp("With --global: force this user of the pool out (needs AWS credentials).", valueName: "username"))
    var user: String?

    @Flag(name: .shortAndLong, help: "Do not ask for confirmation (required without a terminal for --global).")
    var yes = false

    func validate() throws {
        if user != nil && !everywhere {
            throw ValidationError("--user forces a user out of every session: use it with --global.")
        }
    }

    func run(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        if let user {
            try AdminSignOut(settings: settings, username: user, confirmed: yes, output: global.output).run(in: context)
        } else if everywhere {
            try globalSignOut(context, settings)
        } else {
            try localSignOut(context, settings)
        }
    }

    // MARK: this device

    private func localSignOut(_ context: CommandContext, _ settings: Settings) throws {
        let keeper = SessionKeeper(context: context, settings: settings)
        // Under the refresh lock, so a parallel refresh cannot store the session again after it is deleted.
        let report: SignOutReport = try RefreshLock.withLock(profile: settings.profile, environment: context.environment) {
            guard let session = try keeper.repository.load(profile: settings.profile) else {
                return SignOutReport(signedOutLocally: false, globalSignOut: .skipped, revokeToken: .skipped, exposureUntil: nil)
            }
            var revoke = SignOutReport.Outcome.ok
            do {
                let client = try keeper.clientSettings(for: session)
                let service = try context.service(settings, client: client)
                try service.revokeToken(refreshToken: session.refreshToken, client: try keeper.appClient(client))
            } catch {
                revoke = .failed
                let reason = AuthctlError.from(error).message
                context.console.message("authctl: warning: the refresh token could not be revoked (\(reason)); it stays usable until it expires.")
            }
            try keeper.repository.delete(profile: settings.profile)
            return SignOutReport(signedOutLocally: true, globalSignOut: .skipped, revokeToken: revoke,
                                 exposureUntil: session.tokensValidUntil)
        }
        switch global.output {
        case .json:
            context.printJSON(report)
        case .text:
            guard report.signedOutLocally else {
                context.console.message("Not signed in (profile \(settings.profile))")
                return
            }
            context.console.message("Signed out of this device (profile \(settings.profile)). Other devices stay signed in.")
            if let until = report.exposureUntil {
                context.console.message("Access and id tokens already issued keep passing offline JWT checks until \(Format.localTime(until)).")
            }
        }
    }

    // MARK: every device

    private func globalSignOut(_ context: CommandContext, _ settings: Settings) throws {
        let keeper = SessionKeeper(context: context, settings: settings)
        guard let stored = try keeper.repository.load(profile: settings.profile) else {
            throw AuthctlError.notSignedIn(profile: settings.profile)
        }
        try Confirmation.require("Sign out \(stored.username) on ALL devices? [y/N] ", confirmed: yes, console: context.console)

        let session: StoredSession
        let service: CognitoService
        do {
            // An expired access token must not make global sign-out fail: refresh it first.
            (session, service) = try keeper.freshSession(minValidity: 60)
        } catch let error as AuthctlError where error.sessionEnded {
            // The refresh token was refused: the session is dead everywhere already (and removed here).
            return finish(context, settings, SignOutReport(signedOutLocally: true, globalSignOut: .alreadyEnded,
                                                           revokeToken: .skipped, exposureUntil: stored.tokensValidUntil),
                          note: "The session had already ended on the service; it was removed from this device.")
        } catch let error as AuthctlError {
            throw Self.nothingRevoked(error)
        }

        do {
            try service.globalSignOut(accessToken: session.accessToken)
        } catch let error as CognitoError where error.isNotAuthorized {
            _ = try? keeper.repository.delete(profile: settings.profile)
            return finish(context, settings, SignOutReport(signedOutLocally: true, globalSignOut: .alreadyEnded,
                                                           revokeToken: .skipped, exposureUntil: session.tokensValidUntil),
                          note: "The service says these tokens were already revoked (\(error.message)); the session was removed from this device.")
        } catch {
            throw Self.nothingRevoked(AuthctlError.from(error, endpoint: service.endpoint))
        }
        try keeper.repository.delete(profile: settings.profile)
        finish(context, settings, SignOutReport(signedOutLocally: true, globalSignOut: .ok, revokeToken: .skipped,
                                                exposureUntil: session.tokensValidUntil),
               note: "Signed \(session.username) out of every device.")
    }

    private func finish(_ context: CommandContext, _ settings: Settings, _ report: SignOutReport, note: String) {
        switch global.output {
        case .json:
            context.printJSON(report)
        case .text:
            context.console.message(note)
            if let until = report.exposureUntil {
                context.console.message("Access and id tokens already issued keep passing offline JWT checks (API Gateway, other services) until \(Format.localTime(until)).")
            }
        }
    }

    /// A failed global sign-out keeps the session here and says what is still possible.
    static func nothingRevoked(_ error: AuthctlError) -> AuthctlError {
        switch error.code {
        case .unavailable, .throttled, .unexpected:
            return AuthctlError(error.code, "\(error.message)\nNothing was revoked; you are still signed in on every device, this one included. To sign out of this device only: authctl signout")
        default:
            return error
        }
    }
}

/// `signout --output json`; the exit code agrees with it.
struct SignOutReport: Encodable {
    enum Outcome: String, Encodable {
        case ok, failed, skipped
        case alreadyEnded = "already-ended"
    }

    var signedOutLocally: Bool
    var globalSignOut: Outcome
    var revokeToken: Outcome
    var exposureUntil: Date?

    enum CodingKeys: String, CodingKey { case signedOutLocally, globalSignOut, revokeToken, exposureUntil }

    func encode(to encoder: Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(signedOutLocally, forKey: .signedOutLocally)
        try container.encode(globalSignOut, forKey: .globalSignOut)
        try container.encode(revokeToken, forKey: .revokeToken)
        try container.encode(exposureUntil, forKey: .exposureUntil)
    }
}

extension StoredSession {
    /// The last instant at which a token of this session passes an offline JWT check.
    var tokensValidUntil: Date {
        let idExpiry = (try? JWTClaims(token: idToken))?.expiresAt
        return max(accessTokenExpiresAt, idExpiry ?? accessTokenExpiresAt)
    }
}

/// Asks before something that cannot be undone; without a terminal, `--yes` is required.
enum Confirmation {
    static func require(_ question: String, confirmed: Bool, console: Console,
                        withoutTerminal reason: String = "this signs out every device and cannot be undone") throws {
        if confirmed { return }
        guard console.isInteractive else {
            throw AuthctlError(.usage, "\(reason): pass --yes to confirm without a terminal")
        }
        let answer = console.prompt(question, secret: false)?.trimmingCharacters(in: .whitespaces).lowercased()
        guard answer == "y" || answer == "yes" else {
            throw AuthctlError(.unexpected, "cancelled; nothing was changed")
        }
    }
}

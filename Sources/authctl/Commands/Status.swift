import ArgumentParser
import CognitoClient
import LocalFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct Status: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show every profile's session: signed in or not, user, expiry, refresh state.",
        discussion: """
            One line per profile in the config file, plus the selected one. No network call unless \
            --check, which asks Cognito (GetUser, after a refresh when needed) whether the selected \
            profile's session is still alive. Exit 0 when the selected profile is signed in, 77 otherwise.
            """)

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Ask Cognito whether the selected profile's session is still alive.")
    var check = false

    func execute(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        let file = try ConfigFile.load(path: settings.configFile)
        let names = Set(file.profiles.keys).union([settings.profile]).sorted()
        let sessions = ProfileSession(context: context, settings: settings)
        let now = context.now()

        var entries: [ProfileStatus] = []
        // A store that cannot be used is asked only once (every profile in it is reported so).
        var storeFailures: [String: AuthctlError] = [:]
        var selectedFailure: AuthctlError?
        for name in names {
            var entry = ProfileStatus(profile: name, selected: name == settings.profile)
            let kept = context.kept(name)
            do {
                let kind = try kept.storeKind
                entry.store = kind.rawValue
                if let failure = storeFailures[kind.rawValue] { throw failure }
                switch try sessions.item(of: name) {
                case .none:
                    // Not signed in, but a client secret or a waiting sign-in may be kept.
                    entry.kept = try kept.inventory(deviceOf: nil).map(\.rawValue)
                case .session(let session):
                    entry.signedIn = true
                    entry.username = session.username
                    entry.userPoolId = session.userPoolId
                    entry.issuedIn = session.issuingRegion ?? session.region
                    entry.issuedByReplica = session.issuingRegion != nil
                    entry.accessTokenExpiresAt = session.accessTokenExpiresAt
                    entry.signedInWith = session.domain == nil ? .password : .browser
                    entry.domain = session.domain
                    entry.state = session.expiresWithin(0, now: now) ? .expiredRefreshable : .valid
                    entry.kept = try kept.inventory(deviceOf: (session.userPoolId, session.username)).map(\.rawValue)
                case .unreadable:
                    entry.state = .unreadable
                    entry.problem = Messages.unreadableSession(profile: name)
                }
                entry.keptIn = try kept.storePromise()
            } catch {
                let failure = AuthctlError.from(error)
                if let store = entry.store { storeFailures[store] = failure }
                entry.signedIn = false
                entry.state = .storeUnavailable
                entry.problem = failure.message
                if entry.selected { selectedFailure = failure }
            }
            entries.append(entry)
        }

        var checkFailure: AuthctlError?
        if check, let index = entries.firstIndex(where: { $0.selected }), entries[index].signedIn {
            entries[index].checked = true
            do {
                let session = try sessions.withFreshSession { session, service in
                    _ = try service.getUser(accessToken: session.accessToken)
                    return session
                }
                entries[index].state = .valid
                entries[index].accessTokenExpiresAt = session.accessTokenExpiresAt
            } catch SessionError.ended {
                entries[index].signedIn = false
                entries[index].state = .ended
            } catch {
                let failure = AuthctlError.from(error)
                entries[index].problem = failure.message
                checkFailure = failure
            }
        }

        let selected = entries.first { $0.selected }
        context.emit(StatusReport(selectedProfile: settings.profile, profiles: entries, now: now))
        if let selectedFailure, selected?.state == .storeUnavailable {
            throw ExitCode(selectedFailure.code.rawValue)
        }
        if let checkFailure {
            throw AuthctlError(checkFailure.code, "could not check the session: \(checkFailure.message)")
        }
        if selected?.signedIn != true {
            throw ExitCode(AuthctlError.Code.notAuthorized.rawValue)
        }
    }
}

struct ProfileStatus: Encodable {
    enum State: String, Encodable {
        case signedOut = "signed-out"
        case valid
        case expiredRefreshable = "access-expired-refreshable"
        case ended
        case unreadable
        case storeUnavailable = "store-unavailable"
    }

    /// How the session was signed in: it decides where it is refreshed and revoked.
    enum SignInKind: String, Encodable {
        /// signin (SRP, password, USER_AUTH), token --password-stdin: refreshed with Cognito's API.
        case password
        /// signin --browser: the managed login's token endpoint at `domain`.
        case browser
    }

    var profile: String
    var selected: Bool
    var signedIn = false
    @Nullable var signedInWith: SignInKind? = nil
    @Nullable var domain: String? = nil
    @Nullable var username: String? = nil
    @Nullable var userPoolId: String? = nil
    /// The region whose endpoint issued the session's tokens, and whether it is the replica's.
    @Nullable var issuedIn: String? = nil
    var issuedByReplica = false
    @Nullable var accessTokenExpiresAt: Date? = nil
    var state: State = .signedOut
    /// Where the profile's items are kept: secret-service, kernel-keyring or file.
    @Nullable var store: String? = nil
    /// What that store promises (kernel memory, lost at reboot, its idle expiry; the file's place).
    @Nullable var keptIn: String? = nil
    /// The kinds of item the profile keeps (session, pending-challenge, client-secret,
    /// aws-credentials, machine-token, and the user's remembered device).
    var kept: [String] = []
    var checked = false
    @Nullable var problem: String? = nil

    func line(now: Date) -> String {
        let marker = selected ? "*" : " "
        var text = "\(marker) \(profile): "
        switch state {
        case .signedOut:
            text += "not signed in"
            if !kept.isEmpty { text += " (keeps \(kept.joined(separator: ", ")) in \(keptIn ?? store ?? "its store"))" }
        case .ended: text += "session ended (removed)"
        case .unreadable: text += "unreadable session: \(problem ?? "")"
        case .storeUnavailable: text += "unknown: \(problem ?? "no Secret Service")"
        case .valid, .expiredRefreshable:
            text += "signed in as \(OutsideText(username ?? "?")) in \(userPoolId ?? "?")"
            if issuedByReplica { text += " (issued by the replica in \(issuedIn ?? "?"))" }
            if let expiry = accessTokenExpiresAt {
                text += state == .valid
                    ? "; access token valid until \(Format.localTime(expiry))"
                    : "; access token expired at \(Format.localTime(expiry)), refreshable"
            }
            if signedInWith == .browser { text += "; signed in through the browser at \(OutsideText(domain ?? "?"))" }
            text += "; kept in \(keptIn ?? "the Secret Service")"
            let others = kept.filter { $0 != KeptItem.Kind.session.rawValue }
            if !others.isEmpty { text += " with \(others.joined(separator: ", "))" }
            if checked { text += problem == nil ? " (checked with Cognito)" : " (check failed: \(problem ?? ""))" }
        }
        return text
    }
}

struct StatusReport: CommandReport {
    var selectedProfile: String
    var profiles: [ProfileStatus]
    /// For the text only.
    var now: Date

    enum CodingKeys: String, CodingKey { case selectedProfile, profiles }

    var textOutput: [String] { profiles.map { $0.line(now: now) } }
}

import ArgumentParser
import AuthctlCore
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

    /// status never asks for a passphrase: a locked file store is reported as such.
    func mayPrompt(environment: [String: String]) -> Bool { false }

    func execute(in context: CommandContext) throws {
        let settings = try context.settings
        let file = try context.config.file()
        let names = Set(file.profiles.keys).union([settings.profile]).sorted()
        let sessions = try context.profileSession
        let now = context.now()

        var entries: [ProfileStatus] = []
        // A store that cannot be used is asked only once (every profile in it is reported so).
        var storeFailures: [String: AuthctlError] = [:]
        var selectedFailure: AuthctlError?
        for name in names {
            var entry = ProfileStatus(profile: name, selected: name == settings.profile)
            let profileStore = context.profileStore(name)
            do {
                let kind = try profileStore.storeKind
                entry.store = kind.rawValue
                if kind == .file { entry.unlockedUntil = try? FileStoreAgent.expiry(of: name, context: context) }
                if let failure = storeFailures[kind.rawValue] { throw failure }
                switch try sessions.item(of: name) {
                case .none:
                    // Not signed in, but a client secret or a waiting sign-in may be kept.
                    entry.kept = try profileStore.inventory(deviceOf: nil).map(\.rawValue)
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
                    entry.kept = try profileStore.inventory(deviceOf: (session.userPoolId, session.username)).map(
                        \.rawValue)
                case .unreadable:
                    entry.state = .unreadable
                    entry.problem = Messages.unreadableSession(profile: name)
                }
                entry.keptIn = try profileStore.storePromise()
            } catch {
                let failure = AuthctlError.from(error)
                if let store = entry.store { storeFailures[store] = failure }
                entry.signedIn = false
                entry.state =
                    entry.store == StoreKind.file.rawValue && entry.unlockedUntil == nil
                        && failure.code == .configuration ? .locked : .storeUnavailable
                entry.problem = failure.message
                if entry.selected { selectedFailure = failure }
            }
            entries.append(entry)
        }

        var checkFailure: AuthctlError?
        var regions: [RegionCheck]?
        if check, let index = entries.firstIndex(where: { $0.selected }), entries[index].signedIn {
            entries[index].checked = true
            do {
                let expiresAt: Date
                if settings.hasReplica {
                    expiresAt = try checkBothRegions(sessions, context: context, settings: settings, regions: &regions)
                } else {
                    expiresAt = try sessions.withFreshSession { session, service in
                        _ = try service.getUser(accessToken: session.accessToken)
                        return session.accessTokenExpiresAt
                    }
                }
                entries[index].state = .valid
                entries[index].accessTokenExpiresAt = expiresAt
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
        context.emit(StatusReport(selectedProfile: settings.profile, profiles: entries, regions: regions, now: now))
        if let selectedFailure, selected?.state == .storeUnavailable {
            throw AuthctlError.reported(selectedFailure.code)
        }
        if let checkFailure {
            throw AuthctlError(checkFailure.code, "could not check the session: \(checkFailure.message)")
        }
        if selected?.signedIn != true {
            throw AuthctlError.reported(.notAuthorized)
        }
    }

    /// `--check` with a replica: the session (refreshed first when due, at the replica if the
    /// primary does not answer) is shown to both regions, GetUser once each (no retry: what is
    /// measured is one request), their answers put in `regions` (reported whatever the outcome).
    /// Alive when either region accepts it; a refusal that ends a session ends it (removed);
    /// neither region answering is the check's failure. Returns the access token's expiry.
    private func checkBothRegions(
        _ sessions: ProfileSession, context: CommandContext,
        settings: Settings, regions: inout [RegionCheck]?
    ) throws -> Date {
        // The standard policy, as without a replica: refused as expired (this machine's clock is
        // behind), refreshed once and shown again; a refusal that ends the session ends it.
        try sessions.withFreshSession { session, _ in
            let client = try sessions.clientSettings(for: session)
            var probes = [
                RegionCheck.probe(
                    .primary, client, accessToken: session.accessToken, context: context, settings: settings)
            ]
            if let replica = client.atReplica() {
                probes.append(
                    RegionCheck.probe(
                        .replica, replica, accessToken: session.accessToken, context: context, settings: settings))
            }
            regions = probes.map(\.check)
            // Accepted: an answer (reachable) that is no refusal.
            if probes.contains(where: { $0.check.reachable && $0.error == nil }) { return session.accessTokenExpiresAt }
            let errors = probes.compactMap(\.error)
            if let refusal = RefusalTable.deciding(errors) { throw refusal }
            // Neither region could be asked at all (no request was made): not a live session.
            throw AuthctlError(
                .unavailable,
                "neither region could be asked: " + probes.compactMap(\.check.error).joined(separator: "; "))
        }
    }
}

/// One region's answer to `status --check` (with a replica configured).
struct RegionCheck: Encodable {
    enum Role: String, Encodable { case primary, replica }

    static let accepted = "accepted the session"

    var role: Role
    var region: String
    var endpoint: String
    /// The endpoint answered as Cognito does (a success or a refusal, not a 5xx).
    var reachable: Bool
    /// What it answered: `accepted the session`, or the refusal's error type, or `HTTP 503`.
    @Nullable var answer: String?
    /// How long the one request took, in milliseconds (answered or not).
    @Nullable var latencyMs: Int?
    /// Why it was not reached (no connection, timeout, HTTP 5xx, an unusable answer).
    @Nullable var error: String?

    /// GetUser with `accessToken` at `client`'s endpoint, once.
    static func probe(
        _ role: Role, _ client: ClientSettings, accessToken: String, context: CommandContext,
        settings: Settings
    ) -> (check: RegionCheck, error: CognitoError?) {
        var check = RegionCheck(role: role, region: client.region, endpoint: client.endpoint, reachable: false)
        let clock = ContinuousClock()
        let start = clock.now
        var failure: CognitoError?
        do {
            var once = try context.retryPolicy
            once.maxAttempts = 1
            let service = CognitoService(
                endpoint: client.endpoint, transport: try context.transport(), retryPolicy: once)
            _ = try service.getUser(accessToken: accessToken)
            check.reachable = true
            check.answer = accepted
        } catch let error as CognitoError {
            failure = error
            if error.kind == .service, !error.isServerError {
                check.reachable = true
                check.answer = error.errorType ?? "refused"
            } else {
                if error.kind == .service { check.answer = "HTTP \(error.httpStatus ?? 500)" }
                check.error = AuthctlError.from(error).message
            }
        } catch {
            check.error = AuthctlError.from(error).message
        }
        let elapsed = start.duration(to: clock.now).components
        check.latencyMs = Int(elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000)
        return (check, failure)
    }

    var line: String {
        var text = "  \(role.rawValue) \(region) (\(endpoint)): "
        if reachable {
            text += "reachable, \(UntrustedText(answer ?? "answered"))"
        } else {
            text += "not reachable (\(error ?? answer ?? "no answer"))"
        }
        if let latencyMs { text += ", \(latencyMs) ms" }
        return text
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
        /// The file store: no key agent holds its key and nothing may ask for the passphrase here.
        case locked
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
    /// The file store: until when the key agent holds this profile's file unlocked (nil: it does not).
    @Nullable var unlockedUntil: Date? = nil
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
        case .storeUnavailable:
            // One line of state; the store's advice is said once, on stderr (StatusReport).
            text += "unknown: \(StoreKind(rawValue: store ?? "")?.name ?? "the store") cannot be used (why: on stderr)"
        case .locked: text += "locked (the file store): run `authctl unlock`"
        case .valid, .expiredRefreshable:
            text += "signed in as \(UntrustedText(username ?? "?")) in \(userPoolId ?? "?")"
            if issuedByReplica { text += " (issued by the replica in \(issuedIn ?? "?"))" }
            if let expiry = accessTokenExpiresAt {
                text +=
                    state == .valid
                    ? "; access token valid until \(Format.localTime(expiry))"
                    : "; access token expired at \(Format.localTime(expiry)), refreshable"
            }
            if signedInWith == .browser { text += "; signed in through the browser at \(UntrustedText(domain ?? "?"))" }
            text += "; kept in \(keptIn ?? "the Secret Service")"
            if let unlockedUntil { text += ", unlocked by the key agent until \(Format.localTime(unlockedUntil))" }
            let others = kept.filter { $0 != StoreItem.Kind.session.rawValue }
            if !others.isEmpty { text += " with \(others.joined(separator: ", "))" }
            if checked { text += problem == nil ? " (checked with Cognito)" : " (check failed: \(problem ?? ""))" }
        }
        return text
    }
}

struct StatusReport: CommandReport {
    var selectedProfile: String
    var profiles: [ProfileStatus]
    /// `--check` with a replica: the primary's and the replica's answers (absent otherwise).
    var regions: [RegionCheck]? = nil
    /// For the text only.
    var now: Date

    enum CodingKeys: String, CodingKey { case selectedProfile, profiles, regions }

    var textOutput: [String] {
        profiles.map { $0.line(now: now) } + (regions.map { ["Regions checked:"] + $0.map(\.line) } ?? [])
    }

    /// Why a store cannot be used, once each (profiles sharing a store share its failure).
    var textMessages: [String] {
        var said: Set<String> = []
        return profiles.filter { $0.state == .storeUnavailable }.compactMap(\.problem).filter {
            said.insert($0).inserted
        }.map { "authctl: \($0)" }
    }
}

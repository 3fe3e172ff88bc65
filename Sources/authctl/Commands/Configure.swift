import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

struct Configure: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "configure",
        abstract: "Write a profile to the config file (and an app client secret to the profile's store).",
        discussion: """
            Settings come from the global flags (--profile, --user-pool-id, --client-id, --region, --endpoint) \
            and the options below, and only those (a domain, an identity pool, a store or a machine client \
            need no user pool id); with no setting at all, the pool and client id are asked on a terminal. The file is \
            $XDG_CONFIG_HOME/authctl/config.toml (default ~/.config/authctl/config.toml) and never holds a secret. \
            --store records where the profile keeps its session and caches (items already kept in \
            another store are not moved: `authctl store migrate --to STORE` moves them).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Default username for the profile.", valueName: "name"))
    var username: String?

    @Option(help: ArgumentHelp("Identity pool id, <region>:<uuid>, for `authctl aws-credentials`.", valueName: "id"))
    var identityPoolId: String?

    @Flag(
        help:
            "Read the app client's secret from the first line of standard input and keep it in the profile's store (never in the file)."
    )
    var clientSecretStdin = false

    @OptionGroup var managedLogin: ManagedLoginOptions

    @Option(
        help: ArgumentHelp(
            "The loopback port of the browser sign-in's redirect URI http://localhost:N/callback.", valueName: "port"))
    var redirectPort: Int?

    @Option(
        help: ArgumentHelp(
            "Whether a file-store passphrase typed at a prompt also unlocks the key agent (default true; env AUTHCTL_UNLOCK_AFTER_PROMPT wins).",
            valueName: "true|false"))
    var unlockAfterPrompt: String?

    func execute(in context: CommandContext) throws {
        let console = context.console
        let environment = context.environment
        let profileName = Defaults.profileName(option: global.profile, environment: environment)
        let file = try context.config.file()
        var profile = file.profiles[profileName] ?? ProfileConfig()
        let previousClientId = profile.clientId

        if let value = global.userPoolId { profile.userPoolId = value }
        if let value = global.clientId { profile.clientId = value }
        if let value = global.region { profile.region = value }
        if let value = global.endpoint { profile.endpoint = value }
        if let value = username { profile.username = value }
        if let value = identityPoolId {
            profile.identityPoolId = try IdentityPoolSettings.checked(value, origin: "--identity-pool-id")
        }
        if let value = managedLogin.domain {
            try ManagedLoginChoice.check(value)
            profile.domain = value
        }
        if let value = redirectPort {
            guard (1...65535).contains(value) else {
                throw AuthctlError(.usage, "--redirect-port must be a port number, 1 to 65535")
            }
            profile.redirectPort = String(value)
        }
        if let value = unlockAfterPrompt {
            // Written as the boolean it names: `unlock_after_prompt = false`.
            profile.unlockAfterPrompt = String(
                try SettingsResolver.boolean(value, origin: "--unlock-after-prompt", code: .usage))
        }

        // A first set-up with nothing given asks, on a terminal, for the pool and the client; a
        // command naming settings writes those alone (a machine client, a domain, an identity
        // pool, a store need no user pool id).
        if nothingGiven && profile.userPoolId == nil && profile.clientId == nil {
            guard console.inputIsTerminal else {
                throw AuthctlError(
                    .usage,
                    "configure needs settings to write (--user-pool-id, --client-id, --domain, --identity-pool-id, --store, ...), or a terminal to ask on"
                )
            }
            profile.userPoolId = ask("User pool id (e.g. eu-west-1_AbC123): ", console)
            profile.clientId = ask("App client id: ", console)
        }
        // What the commands would refuse later is refused now, before anything is written.
        try Self.check(profile)
        // The secret is kept for its client only.
        if clientSecretStdin && profile.clientId == nil {
            throw AuthctlError(
                .usage, "--client-secret-stdin keeps the secret of an app client: name it with --client-id")
        }

        var storeChange: (from: String?, to: String)?
        if let store = global.store {
            // Recorded before anything is kept, so the client secret below goes to this store.
            if profile.store != store.rawValue { storeChange = (profile.store, store.rawValue) }
            profile.store = store.rawValue
            profile.storeMigratingFrom = nil
            try ConfigFile.update(path: file.path) { file in
                var entry = file.profiles[profileName] ?? ProfileConfig()
                entry.store = store.rawValue
                entry.storeMigratingFrom = nil
                file.profiles[profileName] = entry
            }
            context.backend.forget(profileName)
        }

        // The configuration is what this command writes, so it keeps the client secret through
        // the store owner, for the client it wrote, not through the session layer.
        let profileStore = context.profileStore(profileName)
        if clientSecretStdin {
            // On a terminal the secret is asked without echo; from a pipe, the first line.
            let secret =
                console.inputIsTerminal ? console.prompt("App client secret: ", secret: true) : console.readLine()
            guard let secret, !secret.isEmpty else {
                throw AuthctlError(.usage, "--client-secret-stdin: standard input held no secret")
            }
            try profileStore.keepClientSecret(
                secret, userPoolId: profile.userPoolId ?? "", clientId: profile.clientId ?? "")
        } else if let previousClientId, previousClientId != profile.clientId {
            // The secret kept for the previous client belongs to it, not to the new one.
            _ = try? profileStore.forgetClientSecret()
        }
        // Written under the config lock over the file as it is now: another process's profiles,
        // and this profile's store recorded meanwhile (unless --store set it), are kept.
        try ConfigFile.update(path: file.path) { file in
            var entry = profile
            if global.store == nil, let current = file.profiles[profileName] {
                entry.store = current.store
                entry.storeMigratingFrom = current.storeMigratingFrom
            }
            file.profiles[profileName] = entry
        }

        context.emit(
            ConfigureSummary(
                profile: profileName, configFile: file.path, userPoolId: profile.userPoolId,
                clientId: profile.clientId, region: profile.region, endpoint: profile.endpoint,
                username: profile.username, identityPoolId: profile.identityPoolId,
                domain: profile.domain,
                clientSecretStored: clientSecretStdin, store: profile.store,
                previousStore: storeChange?.from))
    }

    /// No setting at all on the command line: the interactive set-up.
    private var nothingGiven: Bool {
        global.userPoolId == nil && global.clientId == nil && global.region == nil && global.endpoint == nil
            && global.store == nil && username == nil && identityPoolId == nil && managedLogin.domain == nil
            && redirectPort == nil && unlockAfterPrompt == nil && !clientSecretStdin
    }

    /// The pool id, client id, region and endpoint the profile will hold, as the commands check them.
    static func check(_ profile: ProfileConfig) throws {
        if let poolId = profile.userPoolId, !Settings.isValidPoolId(poolId) {
            throw AuthctlError(
                .configuration,
                "user pool id \"\(poolId)\" is malformed: expected <region>_<id>, e.g. eu-west-1_AbCdEf123")
        }
        if let clientId = profile.clientId, !AWSName.isClientId(clientId) {
            throw AuthctlError(.configuration, "app client id \"\(clientId)\" is malformed: letters and digits only")
        }
        if let region = profile.region, !AWSName.isRegion(region) {
            throw AuthctlError(.configuration, "region \"\(region)\" is malformed: expected e.g. eu-west-1")
        }
        if let endpoint = profile.endpoint { try ClientSettings.checkEndpoint(endpoint) }
    }

    private func ask(_ question: String, _ console: Console) -> String? {
        guard let answer = console.prompt(question, secret: false)?.trimmedBlanks(),
            !answer.isEmpty
        else { return nil }
        return answer
    }
}

/// `configure`'s report; absent settings are left out of the JSON.
struct ConfigureSummary: CommandReport {
    var profile: String
    var configFile: String
    var userPoolId: String?
    var clientId: String?
    var region: String?
    var endpoint: String?
    var username: String?
    var identityPoolId: String?
    var domain: String?
    var clientSecretStored: Bool
    var store: String?
    /// The store recorded before `--store` changed it (its items were not moved).
    var previousStore: String?

    enum CodingKeys: String, CodingKey {
        case profile, configFile, userPoolId, clientId, region, endpoint, username, identityPoolId, domain,
            clientSecretStored, store
    }

    var textMessages: [String] {
        var lines = [
            "Profile \(profile) written to \(configFile)\(clientSecretStored ? "; client secret kept in its store (\(store ?? "secret-service"))" : "")"
        ]
        if let previousStore {
            lines.append(
                "Profile \(profile) now keeps its items in \(store ?? "?"); what it kept in \(previousStore) stays there "
                    + "(`authctl store migrate --to \(store ?? "?")` moves items instead).")
        }
        return lines
    }
}

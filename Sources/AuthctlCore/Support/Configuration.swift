import CognitoClient
import LocalFormats
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Everything a command needs to reach one app client, resolved from flags, the environment,
/// the config file and derived defaults, in that order.
package struct Settings: Equatable {
    package var profile: String
    package var userPoolId: String?
    package var clientId: String?
    /// From AUTHCTL_CLIENT_SECRET only; otherwise the keyring is asked when needed.
    package var clientSecret: String?
    package var region: String?
    package var endpoint: String?
    /// The endpoint was named (a flag, the environment, the profile), not derived from the region:
    /// an emulator's, whose key set it publishes itself. A derived one is the region's, and the
    /// keys come from the token's (checked) issuer instead.
    package var endpointIsOverride: Bool
    package var username: String?
    package var caBundle: String?
    package var timeout: Double
    package var configFile: String
    /// The managed-login domain (AUTHCTL_DOMAIN, profile `domain`); `--domain` is applied by the commands that take it.
    package var domain: String? = nil
    /// The profile's `redirect_port`; `--redirect-port` wins.
    package var redirectPort: String? = nil
    /// The profiles the config file has, to name a mistyped one.
    package var profilesInFile: [String] = []
    /// AUTHCTL_IDENTITY_POOL_ID, else the profile's identity_pool_id (`--identity-pool-id` wins: IdentityPoolOptions).
    package var identityPoolId: String?
    /// AUTHCTL_IDENTITY_PROVIDER_NAME, else the profile's identity_provider_name (`--provider-name` wins).
    package var identityProviderName: String?
    /// The replica (`--failover-region` / AUTHCTL_FAILOVER_REGION / failover_region, `--failover-endpoint`).
    package var failoverRegion: String?
    package var failoverEndpoint: String?
    /// The profile's `passkey_rp_id` (RelyingPartyPin).
    package var passkeyRpId: String? = nil
    /// The profile's `passkey_mfa`: passkey MFA turned on here (`mfa enable passkey`), so a passkey
    /// sign-in needs user verification.
    package var passkeyMFA = false
    /// The profile's `machine_tokens = "api"`: machine tokens from GetClientToken even where a
    /// managed-login domain is configured (for sign-ins through the browser).
    package var machineTokensFromAPI = false
    /// Where secrets and codes are asked (the terminal, pinentry).
    package var secretPrompts = SecretPrompts.terminalOnly
    /// Whether a file-store passphrase typed at a prompt also unlocks the key agent, and where
    /// that was said (AUTHCTL_UNLOCK_AFTER_PROMPT, the profile's `unlock_after_prompt`, the default).
    package var unlockAfterPrompt = ResolvedSetting(true, from: .default)

    /// A replica is configured (`--failover-region`, `--failover-endpoint`).
    package var hasReplica: Bool { failoverRegion != nil || failoverEndpoint != nil }

    /// "profile p3 is not in FILE (its profiles: p2); " when the file has profiles but not this one.
    package var unknownProfileNote: String {
        guard !profilesInFile.isEmpty, !profilesInFile.contains(profile) else { return "" }
        return "profile \(profile) is not in \(configFile) (its profiles: \(profilesInFile.joined(separator: ", "))); "
    }

    /// The pool's region taken from its id, `eu-west-1_AbC123` -> `eu-west-1`.
    package static func region(fromPoolId poolId: String) -> String? {
        guard let underscore = poolId.firstIndex(of: "_") else { return nil }
        return String(poolId[..<underscore])
    }

    package static func isValidPoolId(_ poolId: String) -> Bool {
        AWSName.isUserPoolId(poolId)
    }

    /// `region` when it has a region's shape (`eu-west-1`); exit 78 otherwise. Every region goes
    /// into a host name (cognito-idp.<region>.amazonaws.com), so `eu-west-1@evil:443/` would
    /// otherwise name another host.
    package static func checkedRegion(_ region: String, origin: String) throws -> String {
        guard AWSName.isRegion(region) else {
            throw AuthctlError(
                .configuration,
                "region \"\(UntrustedText(region))\" is malformed: expected a region such as eu-west-1 (from \(origin))"
            )
        }
        return region
    }

    package static func defaultEndpoint(region: String) -> String {
        "https://cognito-idp.\(region).amazonaws.com/"
    }

    /// The pool id, present and well formed; exit 78 naming the setting and the ways to set it.
    package func checkedPoolId() throws -> String {
        guard let poolId = userPoolId else {
            throw AuthctlError(
                .configuration,
                """
                \(unknownProfileNote)no user pool id for profile \(profile): pass --user-pool-id, set AUTHCTL_USER_POOL_ID, \
                or set user_pool_id in [profiles.\(profile)] of \(configFile) (authctl configure)
                """)
        }
        guard Settings.isValidPoolId(poolId) else {
            throw AuthctlError(
                .configuration,
                """
                user pool id "\(poolId)" is malformed: expected <region>_<id>, e.g. eu-west-1_AbCdEf123 \
                (from --user-pool-id, AUTHCTL_USER_POOL_ID or \(configFile))
                """)
        }
        return poolId
    }

    package init(
        profile: String,
        userPoolId: String? = nil,
        clientId: String? = nil,
        clientSecret: String? = nil,
        region: String? = nil,
        endpoint: String? = nil,
        username: String? = nil,
        caBundle: String? = nil,
        timeout: Double,
        configFile: String,
        domain: String? = nil,
        redirectPort: String? = nil,
        profilesInFile: [String] = [],
        identityPoolId: String? = nil,
        identityProviderName: String? = nil,
        failoverRegion: String? = nil,
        failoverEndpoint: String? = nil
    ) {
        self.profile = profile
        self.userPoolId = userPoolId
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.region = region
        self.endpoint = endpoint
        endpointIsOverride = endpoint != nil
        self.username = username
        self.caBundle = caBundle
        self.timeout = timeout
        self.configFile = configFile
        self.domain = domain
        self.redirectPort = redirectPort
        self.profilesInFile = profilesInFile
        self.identityPoolId = identityPoolId
        self.identityProviderName = identityProviderName
        self.failoverRegion = failoverRegion
        self.failoverEndpoint = failoverEndpoint
    }
}

extension Settings {
    /// The app client id, present; exit 78 naming the ways to set it.
    package func checkedClientId() throws -> String {
        guard let clientId else {
            throw AuthctlError(
                .configuration,
                """
                \(unknownProfileNote)no app client id for profile \(profile): pass --client-id, set AUTHCTL_CLIENT_ID, \
                or set client_id in [profiles.\(profile)] of \(configFile) (authctl configure)
                """)
        }
        return clientId
    }
}

/// `$XDG_CONFIG_HOME/authctl/config.toml`: profiles only, never secrets.
package struct ConfigFile {
    package let path: String
    package var profiles: [String: ProfileConfig]

    package static func defaultPath(environment: [String: String]) -> String {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return xdg + "/authctl/config.toml"
        }
        let home = Paths.home(environment)
        return home + "/.config/authctl/config.toml"
    }

    /// Reads the file; a missing file is an empty configuration, a malformed one an error.
    /// Profiles are a few lines; a larger file is a mistake (or a trap), not configuration.
    package static let maxBytes = 1 << 20

    /// One command reads the file several times (its settings, the profile's store, a migration
    /// note): parsed once while the file stays the same (device, inode, size, modification time),
    /// read again once it changes. `fresh` always reads it (before a read-modify-write).
    private static let parsed = Mutex<[String: (stamp: [Int], file: ConfigFile)]>([:])

    package static func load(path: String, fresh: Bool = false) throws -> ConfigFile {
        var status = stat()
        guard stat(path, &status) == 0 else { return try read(path: path) }
        let stamp = [
            Int(status.st_dev), Int(status.st_ino), Int(status.st_size),
            Int(status.st_mtim.tv_sec), Int(status.st_mtim.tv_nsec),
        ]
        if !fresh, let known = parsed.withLock({ $0[path] }), known.stamp == stamp { return known.file }
        let file = try read(path: path)
        parsed.withLock { $0[path] = (stamp, file) }
        return file
    }

    private static func read(path: String) throws -> ConfigFile {
        let text: String
        do {
            let data = try BoundedFile.read(path, maxBytes: maxBytes)
            guard let decoded = String(data: data, encoding: .utf8) else {
                throw AuthctlError(.configuration, "cannot read \(path): it is not UTF-8 text")
            }
            text = decoded
        } catch let failure as BoundedFile.Failure where failure.kind == .missing {
            return ConfigFile(path: path, profiles: [:])
        } catch let failure as BoundedFile.Failure {
            throw AuthctlError(.configuration, "cannot read \(path): \(failure.text)")
        }
        do {
            return ConfigFile(path: path, profiles: try ConfigDocument.parse(text))
        } catch ConfigDocumentError.notTOML(let description, let line) {
            throw AuthctlError(.configuration, "\(path) is not valid TOML: \(description) at line \(line)")
        } catch ConfigDocumentError.profileNotATable(let name) {
            throw AuthctlError(.configuration, "\(path): [profiles.\(name)] must be a table")
        } catch ConfigDocumentError.notAString(let name, let key) {
            let type = ProfileConfig.booleanKeys.contains(key) ? "true or false" : "a string"
            throw AuthctlError(.configuration, "\(path): profiles.\(name).\(key) must be \(type)")
        }
    }

    /// Writes the whole file atomically (temporary file and rename), readable by the owner only.
    package func save() throws {
        let text = ConfigDocument.render(profiles)
        let directory = Paths.parent(of: path)
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            let temporary = directory + "/.config.toml.\(getpid()).tmp"
            guard
                FileManager.default.createFile(
                    atPath: temporary, contents: Data(text.utf8),
                    attributes: [.posixPermissions: 0o600])
            else {
                throw AuthctlError(.configuration, "cannot write \(temporary)")
            }
            if rename(temporary, path) != 0 {
                let reason = String(cString: strerror(errno))
                unlink(temporary)
                throw AuthctlError(.configuration, "cannot replace \(path): \(reason)")
            }
        } catch let error as AuthctlError {
            throw error
        } catch {
            throw AuthctlError(.configuration, "cannot write \(path): \(ErrorText.reason(error))")
        }
    }
}

/// One invocation's config.toml, the one document every reader of the settings asks (the
/// resolver, the store's kind per profile, the key agent's unlock after a prompt, `status`,
/// `configure`): read on first use, so a command that needs no setting reads no file, and parsed
/// once while it stays the same (`ConfigFile.load`); writes go through `ConfigFile.update`.
package final class ConfigSource: Sendable {
    package let path: String

    package init(environment: [String: String]) {
        path = ConfigFile.defaultPath(environment: environment)
    }

    /// The document; a missing file is an empty one, a malformed one an error naming the file.
    package func file() throws -> ConfigFile {
        try ConfigFile.load(path: path)
    }
}

/// Where a resolved setting came from, in the words a message names it with.
package struct SettingOrigin: Equatable, Sendable, CustomStringConvertible {
    package enum Level: Equatable, Sendable {
        case flag, environment, profile, `default`
    }

    package let level: Level
    package let description: String

    package init(_ level: Level, _ description: String) {
        self.level = level
        self.description = description
    }

    package static let `default` = SettingOrigin(.default, "the default")
}

/// A setting's value and where it came from.
package struct ResolvedSetting<Value: Equatable & Sendable>: Equatable, Sendable {
    package let value: Value
    package let origin: SettingOrigin

    package init(_ value: Value, from origin: SettingOrigin) {
        self.value = value
        self.origin = origin
    }
}

/// The global options that shape the settings, as given on the command line (nil: not given).
package struct GlobalSettingsInput {
    package var profile: String?
    package var userPoolId: String?
    package var clientId: String?
    package var region: String?
    package var endpoint: String?
    package var failoverRegion: String?
    package var failoverEndpoint: String?
    package var caBundle: String?
    package var timeout: Double?

    package init(
        profile: String? = nil,
        userPoolId: String? = nil,
        clientId: String? = nil,
        region: String? = nil,
        endpoint: String? = nil,
        failoverRegion: String? = nil,
        failoverEndpoint: String? = nil,
        caBundle: String? = nil,
        timeout: Double? = nil
    ) {
        self.profile = profile
        self.userPoolId = userPoolId
        self.clientId = clientId
        self.region = region
        self.endpoint = endpoint
        self.failoverRegion = failoverRegion
        self.failoverEndpoint = failoverEndpoint
        self.caBundle = caBundle
        self.timeout = timeout
    }
}

package enum SettingsResolver {
    /// Applies the precedence: flags, then AUTHCTL_* and AWS_* environment variables, then the
    /// profile in the config file, then defaults derived from the pool id.
    package static func resolve(
        _ options: GlobalSettingsInput, environment env: [String: String], config: ConfigSource? = nil
    ) throws -> Settings {
        let nonEmpty: (String?) -> String? = { value in
            guard let value, !value.isEmpty else { return nil }
            return value
        }
        let profileName = Defaults.profileName(option: options.profile, environment: env)
        let config = config ?? ConfigSource(environment: env)
        let configPath = config.path
        let file = try config.file()
        let profile = file.profiles[profileName] ?? ProfileConfig()

        let poolId =
            nonEmpty(options.userPoolId) ?? nonEmpty(env["AUTHCTL_USER_POOL_ID"]) ?? nonEmpty(profile.userPoolId)
        // A pool lives in one region, named by its id: the shell-wide AWS_REGION / AWS_DEFAULT_REGION
        // (often set for other tools) apply only when no pool id says otherwise.
        let region =
            nonEmpty(options.region) ?? nonEmpty(env["AUTHCTL_REGION"]) ?? nonEmpty(profile.region)
            ?? poolId.flatMap(Settings.region(fromPoolId:)) ?? nonEmpty(env["AWS_REGION"])
            ?? nonEmpty(env["AWS_DEFAULT_REGION"])
        let namedEndpoint =
            nonEmpty(options.endpoint) ?? nonEmpty(env["AUTHCTL_ENDPOINT"])
            ?? nonEmpty(env["AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"]) ?? nonEmpty(env["AWS_ENDPOINT_URL"])
            ?? nonEmpty(profile.endpoint)
        let endpoint = namedEndpoint ?? region.map(Settings.defaultEndpoint(region:))

        var settings = Settings(
            profile: profileName,
            userPoolId: poolId,
            clientId: nonEmpty(options.clientId) ?? nonEmpty(env["AUTHCTL_CLIENT_ID"]) ?? nonEmpty(profile.clientId),
            clientSecret: nonEmpty(env["AUTHCTL_CLIENT_SECRET"]),
            region: region,
            endpoint: endpoint,
            username: nonEmpty(env["AUTHCTL_USERNAME"]) ?? nonEmpty(profile.username),
            caBundle: nonEmpty(options.caBundle) ?? nonEmpty(env["AWS_CA_BUNDLE"]),
            timeout: options.timeout ?? 30,
            configFile: configPath,
            domain: nonEmpty(env["AUTHCTL_DOMAIN"]) ?? nonEmpty(profile.domain),
            redirectPort: nonEmpty(profile.redirectPort),
            profilesInFile: file.profiles.keys.sorted())
        settings.endpointIsOverride = namedEndpoint != nil
        settings.identityPoolId = nonEmpty(env["AUTHCTL_IDENTITY_POOL_ID"]) ?? nonEmpty(profile.identityPoolId)
        settings.identityProviderName =
            nonEmpty(env["AUTHCTL_IDENTITY_PROVIDER_NAME"]) ?? nonEmpty(profile.identityProviderName)
        settings.failoverRegion =
            nonEmpty(options.failoverRegion) ?? nonEmpty(env["AUTHCTL_FAILOVER_REGION"])
            ?? nonEmpty(profile.failoverRegion)
        settings.failoverEndpoint = nonEmpty(options.failoverEndpoint) ?? nonEmpty(env["AUTHCTL_FAILOVER_ENDPOINT"])
        settings.passkeyRpId = nonEmpty(profile.passkeyRpId)
        settings.passkeyMFA = profile.passkeyMFA == "true"
        switch nonEmpty(profile.machineTokens) {
        case nil, "managed-login"?: settings.machineTokensFromAPI = false
        case "api"?: settings.machineTokensFromAPI = true
        case let other?:
            throw AuthctlError(
                .configuration,
                "machine_tokens of profile \(profileName) in \(configPath) is \(UntrustedText(other)): it takes api or managed-login"
            )
        }
        // Used where the file store is opened (KeyAgentLauncher); a bad value is refused here, as a
        // malformed pool id is, whatever the command.
        settings.unlockAfterPrompt = try unlockAfterPrompt(profile: profileName, environment: env, in: file)
        settings.secretPrompts = try SecretPrompts.resolve(
            environment: env, profile: profile, profileName: profileName, configFile: configPath)
        // A malformed pool id is a configuration error whatever the command, before any keyring
        // or network work (a missing one is fine for commands that need none).
        if settings.userPoolId != nil { _ = try settings.checkedPoolId() }
        // The endpoint is checked where a request is made (ClientSettings): a generic
        // AWS_ENDPOINT_URL set for other tools must not stop `status` or a local sign-out.
        return settings
    }

    /// false (or 0/no/off): a passphrase typed at a prompt opens the file for this command only.
    /// Wins over the profile's `unlock_after_prompt`.
    package static let unlockAfterPromptVariable = "AUTHCTL_UNLOCK_AFTER_PROMPT"

    /// Whether a passphrase typed at a prompt for `profile`'s file also unlocks the key agent:
    /// AUTHCTL_UNLOCK_AFTER_PROMPT, else the profile's `unlock_after_prompt`, else true. Any
    /// other value than true/false (1/0, yes/no, on/off) is exit 78 naming where it came from.
    package static func unlockAfterPrompt(profile: String, environment: [String: String], in file: ConfigFile)
        throws -> ResolvedSetting<Bool>
    {
        let origin: SettingOrigin
        let value: String
        if let variable = environment[unlockAfterPromptVariable], !variable.isEmpty {
            (value, origin) = (variable, SettingOrigin(.environment, unlockAfterPromptVariable))
        } else if let setting = file.profiles[profile]?.unlockAfterPrompt {
            let named = "unlock_after_prompt in [profiles.\(profile)] of \(file.path)"
            (value, origin) = (setting, SettingOrigin(.profile, named))
        } else {
            return ResolvedSetting(true, from: .default)
        }
        return ResolvedSetting(try boolean(value, origin: origin.description), from: origin)
    }

    /// The store `profile` keeps its items in: the profile's recorded `store`, which a `--store`
    /// or AUTHCTL_STORE naming another refuses (exit 78: never a second, empty copy), else the
    /// one they name, else the default. `file` nil: nothing is recorded (unit tests' one store).
    package static func store(
        profile: String, option: StoreKind?, environment: [String: String], in file: ConfigFile?
    ) throws -> ResolvedSetting<StoreKind> {
        let requested = try requestedStore(option: option, environment: environment)
        guard let file, let recorded = try recordedStore(profile: profile, in: file) else {
            return requested ?? ResolvedSetting(.default, from: .default)
        }
        if let requested, requested.value != recorded.value {
            throw AuthctlError(
                .configuration,
                StoreMessages.pinnedElsewhere(
                    profile: profile, recorded: recorded.value, configFile: file.path,
                    requested: requested.value, origin: requested.origin.description))
        }
        return recorded
    }

    /// The store asked for by `--store`, else AUTHCTL_STORE; nil when neither names one.
    package static func requestedStore(option: StoreKind?, environment: [String: String]) throws
        -> ResolvedSetting<StoreKind>?
    {
        if let option { return ResolvedSetting(option, from: SettingOrigin(.flag, "--store \(option.rawValue)")) }
        guard let value = environment[StoreKind.variable], !value.isEmpty else { return nil }
        return ResolvedSetting(
            try StoreKind.parse(value, origin: StoreKind.variable),
            from: SettingOrigin(.environment, "\(StoreKind.variable)=\(value)"))
    }

    /// The profile's `store`, recorded on its first kept item (or by `configure --store`).
    package static func recordedStore(profile: String, in file: ConfigFile) throws -> ResolvedSetting<StoreKind>? {
        guard let value = file.profiles[profile]?.store, !value.isEmpty else { return nil }
        let named = "store in [profiles.\(profile)] of \(file.path)"
        return ResolvedSetting(try StoreKind.parse(value, origin: named), from: SettingOrigin(.profile, named))
    }

    /// true/false (also 1/0, yes/no, on/off); anything else is `code` (78: a bad setting) naming `origin`.
    package static func boolean(_ value: String, origin: String, code: AuthctlError.Code = .configuration) throws
        -> Bool
    {
        switch value.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default:
            throw AuthctlError(
                code, "\(origin) must be true or false (got \"\(UntrustedText(String(value.prefix(64))))\")")
        }
    }
}

/// The pool, client and endpoint of one command, checked.
package struct ClientSettings: Equatable {
    package var userPoolId: String
    package var clientId: String
    package var region: String
    package var endpoint: String
    /// The replica, when one is configured: sign-in, refresh and sign-out fail over to it (`Failover`).
    package var replica: Replica?

    package struct Replica: Equatable {
        package var region: String
        package var endpoint: String
    }

    /// Checks what a call to Cognito needs; exit 78 naming the setting and the ways to set it.
    package init(_ settings: Settings) throws {
        let poolId = try settings.checkedPoolId()
        let clientId = try settings.checkedClientId()
        guard AWSName.isClientId(clientId) else {
            throw AuthctlError(.configuration, "app client id \"\(clientId)\" is malformed: letters and digits only")
        }
        let region = try Settings.checkedRegion(
            Defaults.region(configured: settings.region, poolId: poolId),
            origin: "--region, AUTHCTL_REGION, the profile's region, AWS_REGION or AWS_DEFAULT_REGION")
        let endpoint = Defaults.endpoint(configured: settings.endpoint, region: region)
        try Self.checkEndpoint(endpoint)
        self.userPoolId = poolId
        self.clientId = clientId
        self.region = region
        self.endpoint = endpoint
        if settings.failoverRegion != nil || settings.failoverEndpoint != nil {
            let replicaRegion =
                try settings.failoverRegion.map {
                    try Settings.checkedRegion(
                        $0, origin: "--failover-region, AUTHCTL_FAILOVER_REGION or the profile's failover_region")
                } ?? "replica"
            let replicaEndpoint = settings.failoverEndpoint ?? Settings.defaultEndpoint(region: replicaRegion)
            try Self.checkEndpoint(
                replicaEndpoint, origin: "(from --failover-endpoint, AUTHCTL_FAILOVER_ENDPOINT or --failover-region)")
            // An endpoint override is for an emulator on this machine: a real replica is named by its
            // region, so an environment variable cannot send the session's tokens elsewhere.
            if let override = settings.failoverEndpoint,
                !(URLComponents(string: override)?.host.map(Self.isLoopback) ?? false)
            {
                throw AuthctlError(
                    .configuration,
                    """
                    failover endpoint \(override) is not on this machine: --failover-endpoint and AUTHCTL_FAILOVER_ENDPOINT are \
                    for an emulator on loopback (localhost, 127.0.0.1, [::1]); name a real replica by its region with --failover-region
                    """)
            }
            guard !Self.sameEndpoint(replicaEndpoint, endpoint) else {
                throw AuthctlError(
                    .configuration,
                    "the failover replica's endpoint \(replicaEndpoint) is the primary's: set --failover-region to the replica's region (or --failover-endpoint to its endpoint)"
                )
            }
            replica = Replica(region: replicaRegion, endpoint: replicaEndpoint)
        }
    }

    /// The same pool and client at the replica.
    package func atReplica() -> ClientSettings? {
        guard let replica else { return nil }
        var copy = self
        copy.region = replica.region
        copy.endpoint = replica.endpoint
        copy.replica = nil
        return copy
    }

    /// An https:// URL with a host; plain http:// only to this machine (a local emulator), since
    /// tokens, and with `--flow password` the password, would cross the network in clear.
    package static func checkEndpoint(
        _ endpoint: String,
        origin: String =
            "(from --endpoint, AUTHCTL_ENDPOINT, AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER, AWS_ENDPOINT_URL or the config file)"
    ) throws {
        guard let url = URLComponents(string: endpoint), let scheme = url.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = url.host, !host.isEmpty
        else {
            throw AuthctlError(.configuration, "endpoint \"\(endpoint)\" is not an https:// URL with a host \(origin)")
        }
        if scheme == "http" && !isLoopback(host) {
            throw AuthctlError(
                .configuration,
                """
                endpoint \(endpoint) is plain http:// to another machine: tokens would cross the network unencrypted; \
                use https:// (plain http:// is for an emulator on this machine: localhost, 127.0.0.1, [::1]) \(origin)
                """)
        }
    }

    package static func isLoopback(_ host: String) -> Bool {
        Loopback.isLoopbackHost(host)
    }
}

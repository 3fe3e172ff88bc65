import LocalFormats

/// `--debug`'s account of the settings: each one's value (a secret's only as set) and where it
/// came from, told in the order `SettingsResolver` looks (flag, environment, profile, derived or
/// default). Runs only when the trace is on.
enum SettingsTrace {
    static func record(
        _ settings: Settings, input: GlobalSettingsInput, environment: [String: String], to trace: Trace
    ) {
        // Already parsed once by the resolver (ConfigFile caches it), so this reads nothing new.
        let profile = (try? ConfigFile.load(path: settings.configFile))?.profiles[settings.profile] ?? ProfileConfig()
        func set(_ value: String?) -> Bool { !(value ?? "").isEmpty }
        func source(flag: String?, _ variables: [String], profile: String?) -> SettingSource? {
            if set(flag) { return .flag }
            if variables.contains(where: { set(environment[$0]) }) { return .environment }
            return set(profile) ? .profile : nil
        }
        func shown(_ value: String?) -> TraceValue? { value.map { .outside(TracedText(outside: $0)) } }

        let profileSource: SettingSource =
            set(input.profile) ? .flag : set(environment["AUTHCTL_PROFILE"]) ? .environment : .default
        trace.record(.setting("profile", profileSource, shown(settings.profile)))
        trace.record(.setting("config_file", .derived, shown(settings.configFile)))
        let traced: [(StaticString, SettingSource?, String?)] = [
            (
                "user_pool_id", source(flag: input.userPoolId, ["AUTHCTL_USER_POOL_ID"], profile: profile.userPoolId),
                settings.userPoolId
            ),
            (
                "client_id", source(flag: input.clientId, ["AUTHCTL_CLIENT_ID"], profile: profile.clientId),
                settings.clientId
            ),
            ("region", source(flag: input.region, ["AUTHCTL_REGION"], profile: profile.region), settings.region),
            (
                "endpoint",
                source(
                    flag: input.endpoint,
                    ["AUTHCTL_ENDPOINT", "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER", "AWS_ENDPOINT_URL"],
                    profile: profile.endpoint), settings.endpoint
            ),
            (
                "failover_region",
                source(flag: input.failoverRegion, ["AUTHCTL_FAILOVER_REGION"], profile: profile.failoverRegion),
                settings.failoverRegion
            ),
            (
                "failover_endpoint", source(flag: input.failoverEndpoint, ["AUTHCTL_FAILOVER_ENDPOINT"], profile: nil),
                settings.failoverEndpoint
            ),
            ("ca_bundle", source(flag: input.caBundle, ["AWS_CA_BUNDLE"], profile: nil), settings.caBundle),
            ("username", source(flag: nil, ["AUTHCTL_USERNAME"], profile: profile.username), settings.username),
            ("domain", source(flag: nil, ["AUTHCTL_DOMAIN"], profile: profile.domain), settings.domain),
            (
                "identity_pool_id",
                source(flag: nil, ["AUTHCTL_IDENTITY_POOL_ID"], profile: profile.identityPoolId),
                settings.identityPoolId
            ),
        ]
        for (name, origin, value) in traced where value != nil {
            // Named nowhere: a region is the pool id's prefix (or AWS_REGION's), an endpoint the region's.
            trace.record(.setting(name, origin ?? .derived, shown(value)))
        }
        trace.record(.setting("timeout", input.timeout == nil ? .default : .flag, .seconds(settings.timeout)))
        // A secret: whether there is one and where from, never its value.
        if settings.clientSecret != nil {
            trace.record(.setting("client_secret", .environment, .word(StaticWord("set"))))
        }
    }
}

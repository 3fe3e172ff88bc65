import Foundation
import LocalFormats
import XCTest

@testable import AuthctlCore
@testable import authctl

final class SettingsTests: XCTestCase {
    private var home = ""

    override func setUp() {
        home = NSTemporaryDirectory() + "authctl-settings-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: home + "/.config/authctl", withIntermediateDirectories: true)
    }

    private func writeConfig(_ text: String) {
        FileManager.default.createFile(atPath: home + "/.config/authctl/config.toml", contents: Data(text.utf8))
    }

    private func options(_ arguments: [String]) throws -> GlobalOptions {
        try GlobalOptions.parse(arguments)
    }

    private let profileText = """
        [profiles.default]
        user_pool_id = "eu-west-1_FromFile"
        client_id = "fileclient"
        region = "eu-west-1"
        endpoint = "https://file.example/"
        username = "fileuser"

        [profiles.work]
        user_pool_id = "us-east-2_Work"
        client_id = "workclient"
        """

    func testFileAloneAndDerivedDefaults() throws {
        writeConfig(profileText)
        let settings = try SettingsResolver.resolve(try options([]), environment: ["HOME": home])
        XCTAssertEqual(settings.profile, "default")
        XCTAssertEqual(settings.userPoolId, "eu-west-1_FromFile")
        XCTAssertEqual(settings.clientId, "fileclient")
        XCTAssertEqual(settings.endpoint, "https://file.example/")
        XCTAssertEqual(settings.username, "fileuser")

        let work = try SettingsResolver.resolve(try options(["--profile", "work"]), environment: ["HOME": home])
        XCTAssertEqual(work.userPoolId, "us-east-2_Work")
        XCTAssertEqual(work.region, "us-east-2", "region derived from the pool id")
        XCTAssertEqual(work.endpoint, "https://cognito-idp.us-east-2.amazonaws.com/")
    }

    func testEnvironmentBeatsFileAndFlagsBeatEnvironment() throws {
        writeConfig(profileText)
        let env = [
            "HOME": home, "AUTHCTL_USER_POOL_ID": "eu-central-1_Env", "AUTHCTL_CLIENT_ID": "envclient",
            "AUTHCTL_ENDPOINT": "https://env.example/", "AUTHCTL_USERNAME": "envuser", "AUTHCTL_REGION": "eu-central-1",
        ]
        let fromEnv = try SettingsResolver.resolve(try options([]), environment: env)
        XCTAssertEqual(fromEnv.userPoolId, "eu-central-1_Env")
        XCTAssertEqual(fromEnv.clientId, "envclient")
        XCTAssertEqual(fromEnv.endpoint, "https://env.example/")
        XCTAssertEqual(fromEnv.username, "envuser")
        XCTAssertEqual(fromEnv.region, "eu-central-1")

        let fromFlags = try SettingsResolver.resolve(
            try options([
                "--user-pool-id", "ap-south-1_Flag", "--client-id", "flagclient", "--endpoint", "https://flag.example/",
                "--region", "ap-south-1",
            ]),
            environment: env)
        XCTAssertEqual(fromFlags.userPoolId, "ap-south-1_Flag")
        XCTAssertEqual(fromFlags.clientId, "flagclient")
        XCTAssertEqual(fromFlags.endpoint, "https://flag.example/")
        XCTAssertEqual(fromFlags.region, "ap-south-1")
    }

    func testAWSConventionsRankBelowAuthctlVariables() throws {
        let base = ["HOME": home, "AUTHCTL_USER_POOL_ID": "eu-west-1_P"]
        var env = base
        env["AWS_ENDPOINT_URL"] = "https://generic.example/"
        XCTAssertEqual(
            try SettingsResolver.resolve(try options([]), environment: env).endpoint, "https://generic.example/")
        env["AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER"] = "https://cognito-specific.example/"
        XCTAssertEqual(
            try SettingsResolver.resolve(try options([]), environment: env).endpoint,
            "https://cognito-specific.example/")
        env["AUTHCTL_ENDPOINT"] = "https://authctl.example/"
        XCTAssertEqual(
            try SettingsResolver.resolve(try options([]), environment: env).endpoint, "https://authctl.example/")

        // The pool id names its region; the shell-wide AWS_* region variables do not override it.
        var regions = base
        regions["AWS_DEFAULT_REGION"] = "us-west-1"
        regions["AWS_REGION"] = "us-west-2"
        XCTAssertEqual(try SettingsResolver.resolve(try options([]), environment: regions).region, "eu-west-1")
        // Without a pool id, they apply: AWS_REGION first.
        var noPool = regions
        noPool["AUTHCTL_USER_POOL_ID"] = nil
        XCTAssertEqual(try SettingsResolver.resolve(try options([]), environment: noPool).region, "us-west-2")
        noPool["AWS_REGION"] = nil
        XCTAssertEqual(try SettingsResolver.resolve(try options([]), environment: noPool).region, "us-west-1")
        regions["AUTHCTL_REGION"] = "eu-north-1"
        XCTAssertEqual(try SettingsResolver.resolve(try options([]), environment: regions).region, "eu-north-1")
        XCTAssertEqual(
            try SettingsResolver.resolve(try options([]), environment: regions).endpoint,
            "https://cognito-idp.eu-north-1.amazonaws.com/")
    }

    func testProfileFromEnvironmentAndXDGConfigHome() throws {
        let xdg = home + "/xdg"
        try FileManager.default.createDirectory(atPath: xdg + "/authctl", withIntermediateDirectories: true)
        FileManager.default.createFile(
            atPath: xdg + "/authctl/config.toml", contents: Data("[profiles.ci]\nclient_id = \"ciclient\"\n".utf8))
        let settings = try SettingsResolver.resolve(
            try options([]), environment: ["HOME": home, "XDG_CONFIG_HOME": xdg, "AUTHCTL_PROFILE": "ci"])
        XCTAssertEqual(settings.profile, "ci")
        XCTAssertEqual(settings.clientId, "ciclient")
        XCTAssertEqual(settings.configFile, xdg + "/authctl/config.toml")
    }

    func testMalformedPoolIdAndMissingClientAreConfigurationErrors() throws {
        // Named at resolution, before any command looks at the keyring or the network.
        XCTAssertThrowsError(
            try SettingsResolver.resolve(
                try options(["--user-pool-id", "not-a-pool", "--client-id", "c"]),
                environment: ["HOME": home])
        ) { error in
            let error = error as? AuthctlError
            XCTAssertEqual(error?.code, .configuration)
            XCTAssertTrue(error?.message.contains("not-a-pool") ?? false)
        }
        let noClient = try SettingsResolver.resolve(
            try options(["--user-pool-id", "eu-west-1_Ok"]), environment: ["HOME": home])
        XCTAssertThrowsError(try ClientSettings(noClient)) { error in
            let error = error as? AuthctlError
            XCTAssertEqual(error?.code, .configuration)
            XCTAssertTrue(error?.message.contains("--client-id") ?? false)
            XCTAssertTrue(error?.message.contains("AUTHCTL_CLIENT_ID") ?? false)
        }
        let noPool = try SettingsResolver.resolve(try options([]), environment: ["HOME": home])
        XCTAssertThrowsError(try ClientSettings(noPool)) { error in
            XCTAssertTrue((error as? AuthctlError)?.message.contains("AUTHCTL_USER_POOL_ID") ?? false)
        }
    }

    func testMalformedConfigFileIsAClearError() throws {
        writeConfig("[profiles.default\nuser_pool_id = ")
        XCTAssertThrowsError(try SettingsResolver.resolve(try options([]), environment: ["HOME": home])) { error in
            let error = error as? AuthctlError
            XCTAssertEqual(error?.code, .configuration)
            XCTAssertTrue(error?.message.contains("not valid TOML") ?? false)
        }
        writeConfig("[profiles.default]\nuser_pool_id = 5\n")
        XCTAssertThrowsError(try SettingsResolver.resolve(try options([]), environment: ["HOME": home])) { error in
            XCTAssertTrue((error as? AuthctlError)?.message.contains("must be a string") ?? false)
        }
    }

    func testConfigFileRoundTripKeepsOtherProfiles() throws {
        writeConfig(profileText)
        let path = home + "/.config/authctl/config.toml"
        var file = try ConfigFile.load(path: path)
        file.profiles["new"] = ProfileConfig(userPoolId: "eu-west-1_New", clientId: "n")
        try file.save()
        let again = try ConfigFile.load(path: path)
        XCTAssertEqual(again.profiles["new"]?.userPoolId, "eu-west-1_New")
        XCTAssertEqual(again.profiles["default"]?.username, "fileuser")
        XCTAssertEqual(again.profiles["work"]?.clientId, "workclient")
        let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int) ?? 0
        XCTAssertEqual(mode & 0o077, 0, "config file readable by its owner only")
    }

    /// The store kind and `unlock_after_prompt` are resolved in the one resolver, with where each
    /// came from: flag, environment, profile, default (a recorded store refuses another asked for).
    func testTheStoreAndUnlockAfterPromptAreResolvedWithTheirSource() throws {
        writeConfig(
            """
            [profiles.default]
            store = "file"
            unlock_after_prompt = "false"

            [profiles.work]
            user_pool_id = "us-east-2_Work"
            """)
        let file = try ConfigSource(environment: ["HOME": home]).file()
        struct Row {
            let profile: String
            let option: StoreKind?
            let environment: [String: String]
            let kind: StoreKind?
            let level: SettingOrigin.Level?
        }
        let rows = [
            Row(profile: "default", option: nil, environment: [:], kind: .file, level: .profile),
            Row(profile: "default", option: .file, environment: [:], kind: .file, level: .profile),
            Row(profile: "default", option: .kernelKeyring, environment: [:], kind: nil, level: nil),
            Row(
                profile: "work", option: .kernelKeyring, environment: ["AUTHCTL_STORE": "file"], kind: .kernelKeyring,
                level: .flag),
            Row(profile: "work", option: nil, environment: ["AUTHCTL_STORE": "file"], kind: .file, level: .environment),
            Row(profile: "work", option: nil, environment: ["AUTHCTL_STORE": "vault"], kind: nil, level: nil),
            Row(profile: "work", option: nil, environment: [:], kind: .secretService, level: .default),
        ]
        for row in rows {
            let resolved = try? SettingsResolver.store(
                profile: row.profile, option: row.option, environment: row.environment, in: file)
            XCTAssertEqual(
                resolved?.value, row.kind, "\(row.profile) \(String(describing: row.option)) \(row.environment)")
            XCTAssertEqual(resolved?.origin.level, row.level, "\(row.profile) \(row.environment)")
        }
        XCTAssertThrowsError(
            try SettingsResolver.store(profile: "default", option: .kernelKeyring, environment: [:], in: file)
        ) { error in
            XCTAssertEqual((error as? AuthctlError)?.code, .configuration)
            XCTAssertTrue(
                (error as? AuthctlError)?.message.contains("authctl store migrate --to kernel-keyring") ?? false)
        }

        let fromProfile = try SettingsResolver.resolve(try options([]), environment: ["HOME": home])
        XCTAssertEqual(fromProfile.unlockAfterPrompt.value, false)
        XCTAssertEqual(fromProfile.unlockAfterPrompt.origin.level, .profile)
        let fromEnvironment = try SettingsResolver.resolve(
            try options([]), environment: ["HOME": home, "AUTHCTL_UNLOCK_AFTER_PROMPT": "yes"])
        XCTAssertEqual(
            fromEnvironment.unlockAfterPrompt,
            ResolvedSetting(true, from: SettingOrigin(.environment, "AUTHCTL_UNLOCK_AFTER_PROMPT")))
        let byDefault = try SettingsResolver.resolve(try options(["--profile", "work"]), environment: ["HOME": home])
        XCTAssertEqual(byDefault.unlockAfterPrompt, ResolvedSetting(true, from: .default))
        XCTAssertThrowsError(
            try SettingsResolver.resolve(
                try options([]), environment: ["HOME": home, "AUTHCTL_UNLOCK_AFTER_PROMPT": "maybe"])
        ) { error in
            XCTAssertEqual(
                (error as? AuthctlError)?.message.hasPrefix("AUTHCTL_UNLOCK_AFTER_PROMPT must be true or false"), true)
        }
    }

    /// One invocation's settings and stores read the same document: the context's `config`.
    func testTheSettingsAndTheStoresReadTheInvocationsOneDocument() throws {
        writeConfig("[profiles.default]\nstore = \"kernel-keyring\"\nunlock_after_prompt = \"off\"\n")
        let context = CommandContext(
            host: ProcessHost(
                console: FakeConsole(), environment: ["HOME": home], makeTransport: { _ in FakeCognito() },
                makeStore: { UnavailableStore() }))
        XCTAssertEqual(context.config.path, home + "/.config/authctl/config.toml")
        XCTAssertEqual(try context.settings.unlockAfterPrompt.value, false)
        XCTAssertEqual(try context.settings.configFile, context.config.path)
    }
}

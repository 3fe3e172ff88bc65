import LocalFormats
import XCTest

@testable import AuthctlCore

final class PinentrySettingsTests: XCTestCase {
    private func resolve(_ environment: [String: String], _ profile: ProfileConfig = ProfileConfig()) throws
        -> SecretPrompts
    {
        try SecretPrompts.resolve(
            environment: environment, profile: profile, profileName: "default", configFile: "/c/config.toml")
    }

    func testWhereSecretsAreAsked() throws {
        var named = ProfileConfig()
        named.pinentry = "/bin/sh"
        let table: [(environment: [String: String], profile: ProfileConfig, pinentry: String?, first: Bool)] = [
            ([:], ProfileConfig(), nil, false),
            // A desktop session without a pinentry on PATH: the terminal only.
            (["DISPLAY": ":0", "PATH": "/nowhere"], ProfileConfig(), nil, false),
            (["WAYLAND_DISPLAY": "wayland-0", "PATH": "/nowhere"], ProfileConfig(), nil, false),
            // Named: asked through it always; the variable wins over the profile; none turns it off.
            ([:], named, "/bin/sh", true),
            (["AUTHCTL_PINENTRY": "sh", "PATH": "/nowhere:/bin"], ProfileConfig(), "/bin/sh", true),
            (["AUTHCTL_PINENTRY": "none", "DISPLAY": ":0"], named, nil, false),
        ]
        for row in table {
            let prompts = try resolve(row.environment, row.profile)
            XCTAssertEqual(prompts.pinentry, row.pinentry, "\(row.environment)")
            XCTAssertEqual(prompts.pinentryFirst, row.first, "\(row.environment)")
        }
        // The system's pinentry is found on PATH when there is one.
        let directory = NSTemporaryDirectory() + "authctl-pinentry-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        FileManager.default.createFile(
            atPath: directory + "/pinentry", contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        for session in ["DISPLAY", "WAYLAND_DISPLAY"] {
            let desktop = try resolve([session: ":0", "PATH": "/nowhere:" + directory])
            XCTAssertEqual(desktop.pinentry, directory + "/pinentry")
            XCTAssertFalse(desktop.pinentryFirst, "the terminal first where there is one")
        }
        XCTAssertNil(try resolve(["PATH": directory]).pinentry, "no desktop session: no pinentry unless named")
    }

    func testBadValuesAreConfigurationErrorsNamingTheirOrigin() {
        var profile = ProfileConfig()
        profile.pinentry = "/no/such/pinentry"
        var maybe = ProfileConfig()
        maybe.pinentryNoninteractive = "maybe"
        let table: [(environment: [String: String], profile: ProfileConfig, said: String)] = [
            (["AUTHCTL_PINENTRY": "no-such-pinentry", "PATH": "/bin"], ProfileConfig(), "from AUTHCTL_PINENTRY"),
            ([:], profile, "pinentry in [profiles.default] of /c/config.toml"),
            (["AUTHCTL_PINENTRY": "/etc/passwd"], ProfileConfig(), "not an executable file"),
            (["AUTHCTL_PINENTRY_TIMEOUT": "0"], ProfileConfig(), "AUTHCTL_PINENTRY_TIMEOUT"),
            (["AUTHCTL_PINENTRY_TIMEOUT": "soon"], ProfileConfig(), "1 to 3600"),
            ([:], maybe, "pinentry_noninteractive in [profiles.default]"),
        ]
        for row in table {
            XCTAssertThrowsError(try resolve(row.environment, row.profile), row.said) { error in
                let failure = error as? AuthctlError
                XCTAssertEqual(failure?.code, .configuration, row.said)
                XCTAssertTrue(failure?.message.contains(row.said) == true, failure?.message ?? "")
            }
        }
    }
}

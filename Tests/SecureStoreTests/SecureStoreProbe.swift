import Foundation
import SecureStore
import XCTest

/// Not a test on its own: the entry point of the subprocess that `Probe.run` starts
/// (this same test binary, run with `SecureStoreTests.SecureStoreProbe/testProbe`).
/// libsecret keeps one Secret Service connection per process, so checks against another
/// bus (a hung one, one without a provider, a locked keyring) need a fresh process.
/// Skipped when run as part of the suite.
final class SecureStoreProbe: XCTestCase {
    func testProbe() throws {
        let env = ProcessInfo.processInfo.environment
        guard let operations = env["AUTHCTL_SECURESTORE_PROBE"],
            let output = env["AUTHCTL_SECURESTORE_PROBE_OUT"]
        else {
            throw XCTSkip("subprocess entry point for the SecureStore probe tests")
        }
        let profile = env["AUTHCTL_SECURESTORE_PROBE_PROFILE"] ?? "probe"
        let timeout = Double(env["AUTHCTL_SECURESTORE_PROBE_TIMEOUT"] ?? "") ?? 5
        let store = SecretServiceStore(timeout: timeout, environment: env)
        let key = SecretKey(kind: "session", profile: profile, userPoolId: "eu-west-1_probe", clientId: "probe")

        var lines: [String] = []
        for operation in operations.split(separator: ",").map(String.init) {
            let start = Date()
            let outcome: String
            do {
                switch operation {
                case "read": outcome = "ok:" + ((try store.read(key)) ?? "nil")
                case "write":
                    try store.write(key, label: "authctl probe", secret: "{\"probe\":true}")
                    outcome = "ok:written"
                case "delete": outcome = "ok:" + String(try store.delete(key))
                default: outcome = "error:unknown-operation:\(operation)"
                }
            } catch let error as SecureStoreError {
                outcome = "error:\(error.kind.rawValue):\(error.message)"
            } catch {
                outcome = "error:other:\(error)"
            }
            let seconds = Date().timeIntervalSince(start)
            lines.append("\(operation)\t\(seconds)\t\(outcome.replacingOccurrences(of: "\n", with: " "))")
        }
        try lines.joined(separator: "\n").write(toFile: output, atomically: true, encoding: .utf8)
    }
}

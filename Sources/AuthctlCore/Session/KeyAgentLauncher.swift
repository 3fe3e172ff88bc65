import CProcess
import LocalFormats
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// How the executable uses the key agent: the file store asks it first, a passphrase typed at
/// a prompt unlocks it (unless AUTHCTL_UNLOCK_AFTER_PROMPT or the profile's unlock_after_prompt
/// says false), and `authctl agent` is started on demand, detached.
package enum KeyAgentLauncher {
    /// `unlocksAfterPrompt`: the resolved `unlock_after_prompt` of a profile
    /// (`SettingsResolver.unlockAfterPrompt`, over the invocation's one config document).
    static func use(environment: [String: String], unlocksAfterPrompt: @escaping @Sendable (String) -> Bool)
        -> AgentUse
    {
        AgentUse(
            client: KeyAgentClient(environment: environment),
            afterPrompt: { profile in unlocksAfterPrompt(profile) ? .standard : nil },
            start: { try start(environment: environment) })
    }

    /// `authctl agent --on-demand`, detached (`authctl_spawn_detached`): its own session, no
    /// inherited descriptor, stdio on /dev/null, the caller's environment without its secrets.
    static func start(environment: [String: String]) throws {
        let executable = "/proc/self/exe"
        var target = [CChar](repeating: 0, count: 4096)
        let length = readlink(executable, &target, target.count - 1)
        guard length > 0 else {
            throw AuthctlError(.unexpected, "cannot find authctl's own executable to start the key agent")
        }
        let path = String(decoding: target[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let arguments = [path, "agent", "--on-demand"]
        let childEnvironment = ChildProcess.browserEnvironment(environment).map { "\($0.key)=\($0.value)" }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = childEnvironment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        guard authctl_spawn_detached(path, argv, envp) > 0 else {
            throw AuthctlError(.unexpected, "cannot start the key agent: \(String(cString: strerror(errno)))")
        }
    }

    /// "15m", "8h", "1h30m", "90s", "2d" or plain seconds; at least 1 s, at most 7 days.
    package static func duration(_ text: String, option: String) throws -> UInt64 {
        var total: UInt64 = 0
        var digits = ""
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            let unit: UInt64
            switch character {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86400
            default: throw AuthctlError(.usage, "\(option) takes a duration such as 15m, 8h or 1h30m (got \"\(text)\")")
            }
            guard let value = UInt64(digits), digits.count <= 6 else {
                throw AuthctlError(.usage, "\(option) takes a duration such as 15m, 8h or 1h30m (got \"\(text)\")")
            }
            total += value * unit
            digits = ""
        }
        if !digits.isEmpty {
            guard let value = UInt64(digits), digits.count <= 7 else {
                throw AuthctlError(.usage, "\(option) takes a duration such as 15m, 8h or 1h30m (got \"\(text)\")")
            }
            total += value
        }
        guard total >= 1, total <= 7 * 86400 else {
            throw AuthctlError(.usage, "\(option) must be between 1 second and 7 days (got \"\(text)\")")
        }
        return total
    }
}

/// The key agent as `status` reports it.
package enum FileStoreAgent {
    /// Until when the agent holds `profile`'s file; nil when it does not. Never prompts.
    package static func expiry(of profile: String, context: CommandContext) throws -> Date? {
        guard let store = context.backend.store(.file, environment: context.environment).keyAgent,
            let seconds = try store.agentExpiry(profile: profile)
        else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }
}

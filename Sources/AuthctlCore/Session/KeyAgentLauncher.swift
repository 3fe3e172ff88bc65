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
    /// false (or 0/no/off): a passphrase typed at a prompt opens the file for this command only.
    /// Wins over the profile's `unlock_after_prompt`.
    static let afterPromptVariable = "AUTHCTL_UNLOCK_AFTER_PROMPT"

    static func use(environment: [String: String]) -> AgentUse {
        AgentUse(
            client: KeyAgentClient(environment: environment),
            afterPrompt: { profile in
                // The settings refused a bad value before any store was opened; should one get
                // here anyway, the key is not handed over.
                let path = ConfigFile.defaultPath(environment: environment)
                let unlocks = try? unlocksAfterPrompt(
                    environment: environment, profile: ConfigFile.load(path: path).profiles[profile],
                    profileName: profile, configFile: path)
                return unlocks == true ? .standard : nil
            },
            start: { try start(environment: environment) })
    }

    /// Whether a passphrase typed at a prompt for `profileName`'s file also unlocks the agent:
    /// AUTHCTL_UNLOCK_AFTER_PROMPT, else the profile's `unlock_after_prompt`, else true. Any
    /// other value than true/false (1/0, yes/no, on/off) is exit 78 naming where it came from.
    package static func unlocksAfterPrompt(
        environment: [String: String], profile: ProfileConfig?, profileName: String, configFile: String
    ) throws -> Bool {
        let (value, origin): (String, String)
        if let variable = environment[afterPromptVariable], !variable.isEmpty {
            (value, origin) = (variable, afterPromptVariable)
        } else if let setting = profile?.unlockAfterPrompt {
            (value, origin) = (setting, "unlock_after_prompt in [profiles.\(profileName)] of \(configFile)")
        } else {
            return true
        }
        return try boolean(value, origin: origin)
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
        guard let store = context.backend.store(.file, environment: context.environment) as? AgeFileStore,
            let seconds = try store.agentExpiry(profile: profile)
        else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }
}

import ArgumentParser
import AuthctlCore
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authctl unlock`: the file store's passphrase once, its keys to the key agent.
struct Unlock: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the encrypted file store once: a key agent keeps its keys for later commands.",
        discussion: """
            Takes the passphrase from --passphrase-fd, AUTHCTL_STORE_PASSPHRASE_FILE, a systemd credential, \
            AUTHCTL_STORE_PASSPHRASE or the terminal, opens the store's files with it (scrypt runs here, once) and \
            hands their keys, never the passphrase, to a per-user key agent (started when none runs). Later \
            commands ask the agent to open and seal the files. The agent forgets the keys after --idle without a \
            request, after --for in any case, or at `authctl lock`, and exits when it holds nothing.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(
        name: .customLong("for"),
        help: ArgumentHelp("Forget the keys this long after unlocking.", valueName: "duration"))
    var lifetime: String = "8h"

    @Option(
        help: ArgumentHelp("Forget the keys after this long without a request.", valueName: "duration"))
    var idle: String = "15m"

    func execute(in context: CommandContext) throws {
        let lifetime = AgentLifetime(
            lifetime: try KeyAgentLauncher.duration(self.lifetime, option: "--for"),
            idle: try KeyAgentLauncher.duration(idle, option: "--idle"))
        guard let store = context.backend.store(.file, environment: context.environment).keyAgent else {
            throw AuthctlError(.unexpected, "the file store is not available in this build")
        }
        let report: UnlockReport
        do {
            report = try store.unlock(lifetime, profile: try context.settings.profile)
        } catch let error as SecureStoreError where error.cause == .noPassphrase || error.cause == .storeLocked {
            throw AuthctlError(
                .configuration,
                """
                authctl unlock needs the file store's passphrase and none was given: run it on a terminal, or give \
                --passphrase-fd N, \(PassphraseSource.fileVariable) (a file holding it), a systemd credential \
                named \(PassphraseSource.credentialName) or \(PassphraseSource.variable)
                """)
        }
        context.emit(
            UnlockedReport(
                directory: store.directory, socket: KeyAgentClient(environment: context.environment).socketPath,
                files: report.opened.count, notOpened: report.notOpened,
                expiresAt: Date(timeIntervalSinceNow: Double(lifetime.lifetime)),
                idleSeconds: Int(lifetime.idle), idle: Format.duration(seconds: lifetime.idle)))
    }
}

struct UnlockedReport: CommandReport {
    var directory: String
    var socket: String
    var files: Int
    var notOpened: [String]
    var expiresAt: Date
    var idleSeconds: Int
    var idle: String

    enum CodingKeys: String, CodingKey { case directory, socket, files, notOpened, expiresAt, idleSeconds }

    var textMessages: [String] {
        var lines = [
            "Unlocked the file store \(directory) (\(files) file\(files == 1 ? "" : "s")) until "
                + "\(expiresAt.formatted(.iso8601)) or \(idle) without use; `authctl lock` forgets it now."
        ]
        if !notOpened.isEmpty {
            // One passphrase per directory: a file of another passphrase stays locked.
            let profiles = notOpened.compactMap(AgeFileStore.profile(ofFile:))
            let signIns = profiles.map { "authctl signin --store file --profile \($0)" }.joined(separator: "; ")
            lines.append(
                "warning: the passphrase does not open \(notOpened.joined(separator: ", ")); "
                    + (notOpened.count == 1 ? "it stays" : "they stay")
                    + " locked, and every file of \(directory) should take one passphrase: move "
                    + (notOpened.count == 1 ? "it" : "them") + " out of \(directory)"
                    + (signIns.isEmpty ? "" : " and sign in again (\(signIns))")
                    + ", or run `authctl unlock` with "
                    + (notOpened.count == 1 ? "its" : "their") + " passphrase too")
        }
        return lines
    }
}

/// `authctl lock`: the key agent forgets every key and exits.
struct LockCommand: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Make every key agent of this user forget the file store's keys now (they then exit).",
        discussion: """
            Looks where agents of this user listen: $XDG_RUNTIME_DIR/authctl/agent.sock, /run/user/UID/authctl/ \
            and /tmp/authctl-agent-UID/ (where an agent started without XDG_RUNTIME_DIR listens), and names the \
            sockets it looked at when none was running.
            """)

    @OptionGroup var global: GlobalOptions

    func execute(in context: CommandContext) throws {
        // Every place an agent of this user may listen: one started without XDG_RUNTIME_DIR (su,
        // cron) listens under /tmp, and a `lock` with it set would otherwise miss that one.
        var locked: [String] = []
        var checked: [String] = []
        for client in KeyAgentClient.everyPlace(environment: context.environment) {
            checked.append(client.socketPath)
            do {
                if try client.lock() { locked.append(client.socketPath) }
            } catch let error as SecureStoreError {
                // The environment's own place must be usable; another place that is not is skipped.
                if checked.count == 1 { throw AuthctlError.from(error) }
            }
        }
        context.emit(LockedReport(wasRunning: !locked.isEmpty, locked: locked, checked: checked))
    }
}

struct LockedReport: CommandReport {
    var wasRunning: Bool
    /// The sockets whose agent forgot its keys.
    var locked: [String]
    /// Every socket looked at.
    var checked: [String]

    var textMessages: [String] {
        guard !locked.isEmpty else {
            return ["No key agent was running (looked at \(checked.joined(separator: ", "))); nothing was unlocked."]
        }
        return locked.map { "The key agent on \($0) forgot every key." }
    }
}

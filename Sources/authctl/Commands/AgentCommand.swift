import ArgumentParser
import AuthctlCore
import CProcess
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `authctl agent`: the key agent in the foreground (a systemd unit, a container, a CI job); with
/// `--on-demand` (how `authctl unlock` starts it, detached) it exits unless given a key within 30 s.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Run the key agent that holds the file store's keys (started by `authctl unlock` when none runs).",
        discussion: """
            Listens on $XDG_RUNTIME_DIR/authctl/agent.sock (without XDG_RUNTIME_DIR: /tmp/authctl-agent-UID/), \
            answers only processes of the same user, keeps keys in locked memory and is not dumpable. It exits \
            when it holds nothing after holding something (`authctl lock`, idle timeout, lifetime), or on SIGTERM.
            """)

    @Flag(help: .hidden)
    var onDemand = false

    func run() throws {
        ProcessSafety.forbidCoreDumps()
        // SIGTERM, SIGINT and SIGHUP are recorded and end the serving loop, which wipes the keys.
        authctl_defer_termination_signals()
        do {
            let server = try KeyAgentServer(
                environment: ProcessInfo.processInfo.environment,
                options: .init(firstKeyWait: onDemand ? 30 : nil))
            try server.listen()
            if !onDemand {
                StandardStreams.message(
                    "authctl agent: listening on \(AgentSocket.path(environment: ProcessInfo.processInfo.environment))\n"
                )
            }
            server.serve { authctl_pending_termination_signal() != 0 }
        } catch let error as SecureStoreError {
            StandardStreams.message("authctl: \(AuthctlError.from(error).message)\n")
            throw ExitCode(AuthctlError.from(error).code.rawValue)
        }
    }
}

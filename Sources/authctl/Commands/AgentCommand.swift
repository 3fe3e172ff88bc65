import ArgumentParser
import AuthctlCore
import CProcess
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `authctl agent`: the key agent in the foreground (a systemd unit, a container, a CI job); with
/// `--on-demand` (how `authctl unlock` starts it, detached) it exits unless given a key within 30 s.
/// Started by systemd's socket activation (Packaging/systemd/authctl-agent.socket) it takes the
/// listening socket handed over and, as on demand, exits when it holds nothing: systemd starts it
/// again on the next connection.
struct AgentCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "agent",
        abstract: "Run the key agent that holds the file store's keys (started by `authctl unlock` when none runs).",
        discussion: """
            Listens on $XDG_RUNTIME_DIR/authctl/agent.sock (without XDG_RUNTIME_DIR: /tmp/authctl-agent-UID/), \
            answers only processes of the same user, keeps keys in locked memory and is not dumpable. It exits \
            when it holds nothing after holding something (`authctl lock`, idle timeout, lifetime), or on SIGTERM. \
            Under systemd's socket activation (authctl-agent.socket; LISTEN_PID, LISTEN_FDS=1) it takes the \
            listening socket handed over as descriptor 3 after checking it, and exits 30 s after a start that \
            brought no key.
            """)

    @Flag(help: .hidden)
    var onDemand = false

    func run() throws {
        ProcessSafety.forbidCoreDumps()
        // SIGTERM, SIGINT and SIGHUP are recorded and end the serving loop, which wipes the keys.
        authctl_defer_termination_signals()
        do {
            let environment = ProcessInfo.processInfo.environment
            // Keep no directory of the caller's busy (an unmount, a removed working directory):
            // every path the agent uses is absolute.
            _ = chdir("/")
            let handover = try SocketActivation.handoverToThisProcess()
            let activated = handover != .none
            let server = try KeyAgentServer(
                environment: environment,
                options: .init(firstKeyWait: onDemand || activated ? 30 : nil))
            try server.listen(handover)
            if !onDemand {
                let how = activated ? "socket-activated on" : "listening on"
                StandardStreams.message("authctl agent: \(how) \(AgentSocket.path(environment: environment))\n")
            }
            server.serve { authctl_pending_termination_signal() != 0 }
        } catch let error where error is SecureStoreError || error is SocketActivation.Refusal {
            throw CommandExit.failing(AuthctlError.from(error), console: TerminalConsole(environment: [:]))
        }
    }
}

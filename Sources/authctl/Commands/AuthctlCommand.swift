import ArgumentParser
import AuthctlCore

/// A subcommand whose work takes an injected context (swiftly's shape). `run()` builds the live
/// context, runs, and turns any error into its message on stderr and its exit code.
protocol AuthctlCommand: ParsableCommandWithGlobals {
    /// The command's work; it reports through `context.emit`.
    func execute(in context: CommandContext) throws
}

protocol ParsableCommandWithGlobals: ParsableCommand {
    var global: GlobalOptions { get }
}

extension AuthctlCommand {
    /// This invocation's state, built once from the host and the global options.
    func context(in host: ProcessHost) -> CommandContext {
        CommandContext(host: host, options: global.invocationOptions)
    }

    /// Runs over `host` (tests hand in fakes); errors are thrown as they are.
    func run(in host: ProcessHost) throws {
        try execute(in: context(in: host))
    }

    func run() throws {
        ProcessSafety.forbidCoreDumps()
        let context = context(in: .live())
        do {
            try execute(in: context)
        } catch {
            var failure = AuthctlError.from(error)
            if self is DirectoryWrite, failure.code == .unavailable, let settings = context.settingsIfResolvable,
               let region = settings.failoverRegion ?? settings.failoverEndpoint.map({ _ in "the second region" }) {
                failure.message += "\n" + Failover.readOnlyNote(replicaRegion: region)
            }
            // A failure the report already explained (`AuthctlError.reported`) says nothing more.
            if !failure.message.isEmpty { context.console.message("authctl: \(failure.message)") }
            throw ExitCode(failure.code.rawValue)
        }
    }
}

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
    /// Runs in `context`, which takes this command's `--output` (the one place that reads it).
    func run(in context: CommandContext) throws {
        context.outputFormat = global.output
        context.backend.option = global.store
        context.backend.passphraseFD = global.passphraseFd
        try execute(in: context)
    }

    func run() throws {
        ProcessSafety.forbidCoreDumps()
        let context = CommandContext.live()
        do {
            try run(in: context)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            var failure = AuthctlError.from(error)
            if self is DirectoryWrite, failure.code == .unavailable,
               let settings = try? SettingsResolver.resolve(global, environment: context.environment),
               let region = settings.failoverRegion ?? settings.failoverEndpoint.map({ _ in "the second region" }) {
                failure.message += "\n" + Failover.readOnlyNote(replicaRegion: region)
            }
            context.console.message("authctl: \(failure.message)")
            throw ExitCode(failure.code.rawValue)
        }
    }
}

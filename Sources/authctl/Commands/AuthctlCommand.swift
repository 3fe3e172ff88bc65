import ArgumentParser
import AuthctlCore

/// A subcommand whose work takes an injected context (swiftly's shape). `run()` builds the live
/// context, runs, and turns any error into its message on stderr and its exit code.
protocol AuthctlCommand: ParsableCommandWithGlobals {
    /// The command's work; it reports through `context.emit`.
    func execute(in context: CommandContext) throws

    /// Whether a person may be asked for the file store's passphrase (default: yes).
    func mayPrompt(environment: [String: String]) -> Bool

    /// What `--timeout` bounds (default: the whole command).
    var timeoutScope: TimeoutScope { get }
}

protocol ParsableCommandWithGlobals: ParsableCommand {
    var global: GlobalOptions { get }
}

extension AuthctlCommand {
    func mayPrompt(environment: [String: String]) -> Bool { true }

    var timeoutScope: TimeoutScope { .wholeCommand }

    /// This invocation's state, built once from the host and the global options.
    func context(in host: ProcessHost) -> CommandContext {
        var options = global.invocationOptions
        options.mayPrompt = mayPrompt(environment: host.environment)
        options.timeoutScope = timeoutScope
        return CommandContext(host: host, options: options)
    }

    /// Runs over `host` (tests hand in fakes); errors are thrown as they are.
    func run(in host: ProcessHost) throws {
        try execute(in: context(in: host))
    }

    func run() throws {
        try LiveRun.run(
            global.invocationOptions, mayPrompt: mayPrompt(environment:), timeoutScope: timeoutScope,
            directoryWrite: self is DirectoryWrite, execute(in:))
    }
}

/// A command's run on the live host, whichever front door parsed it (ArgumentParser or
/// `FastPath`): the context built once, any error turned into its message on stderr and its exit code.
enum LiveRun {
    static func run(
        _ invocation: InvocationOptions, mayPrompt: ([String: String]) -> Bool, timeoutScope: TimeoutScope,
        directoryWrite: Bool, _ work: (CommandContext) throws -> Void
    ) throws {
        ProcessSafety.forbidCoreDumps()
        ProcessSafety.ignoreBrokenPipes()
        let host = ProcessHost.live()
        var options = invocation
        options.mayPrompt = mayPrompt(host.environment)
        options.timeoutScope = timeoutScope
        let context = CommandContext(host: host, options: options)
        do {
            try work(context)
        } catch {
            var failure = AuthctlError.from(error)
            if directoryWrite, failure.code == .unavailable, let settings = context.settingsIfResolvable,
                let region = settings.failoverRegion ?? settings.failoverEndpoint.map({ _ in "the second region" })
            {
                failure.message += "\n" + Failover.readOnlyNote(replicaRegion: region)
            }
            throw CommandExit.failing(failure, console: context.console)
        }
    }
}

/// The one way out of a failed invocation, for every command (the agent's too) and the entry
/// point: the message on stderr, then the documented exit code, thrown to ArgumentParser (or
/// handed to its `exit(withError:)`), which ends the process with it.
enum CommandExit {
    static func failing(_ failure: AuthctlError, console: Console) -> ExitCode {
        // A failure the report already explained (`AuthctlError.reported`) says nothing more.
        if !failure.message.isEmpty { console.message("authctl: \(failure.message)") }
        return ExitCode(failure.code.rawValue)
    }
}

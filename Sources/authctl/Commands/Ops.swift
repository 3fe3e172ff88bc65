import ArgumentParser
import AuthctlCore

/// `authctl ops`: operator commands over many users of a pool (IAM-signed admin operations).
struct Ops: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ops",
        abstract: "Operator commands over many users of a pool (AWS credentials, SigV4).",
        subcommands: [OpsSignOut.self, OpsSessions.self])
}

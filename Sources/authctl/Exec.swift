import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct Exec: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command with fresh tokens in its environment (AUTHCTL_ACCESS_TOKEN, AUTHCTL_ID_TOKEN).",
        discussion: """
            The tokens go in the environment, never on the command's argv. authctl replaces itself \
            with the command (exec), so the exit status and signals are the command's own. \
            Example: authctl exec -- sh -c 'curl -H "Authorization: Bearer $AUTHCTL_ACCESS_TOKEN" https://api.example.com/me'
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Refresh first when the access token expires within this many seconds.", valueName: "seconds"))
    var minValid: Double = 60

    @Argument(parsing: .postTerminator, help: ArgumentHelp("The command and its arguments, after --.", valueName: "command"))
    var command: [String] = []

    func validate() throws {
        if command.isEmpty { throw ValidationError("give the command to run after --, e.g. authctl exec -- env") }
    }

    func run(in context: CommandContext) throws {
        let settings = try SettingsResolver.resolve(global, environment: context.environment)
        let (session, _) = try SessionKeeper(context: context, settings: settings).freshSession(minValidity: minValid)
        let checks = TokenChecks(context: context, settings: settings)
        try checks.checkClaims(session, .access)
        try checks.checkClaims(session, .id)

        setenv("AUTHCTL_ACCESS_TOKEN", session.accessToken, 1)
        setenv("AUTHCTL_ID_TOKEN", session.idToken, 1)
        setenv("AUTHCTL_TOKEN_EXPIRES_AT", Format.iso8601(session.accessTokenExpiresAt), 1)
        setenv("AUTHCTL_PROFILE", session.profile, 1)

        var argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) }
        argv.append(nil)
        execvp(command[0], &argv)
        let reason = String(cString: strerror(errno))
        let code: AuthctlError.Code = errno == ENOENT ? .commandNotFound : .cannotExecute
        throw AuthctlError(code, "cannot run \(command[0]): \(reason)")
    }
}

import ArgumentParser
import AuthctlCore

#if canImport(Glibc)
import Glibc
#endif

@main
struct Authctl: ParsableCommand {
    static let version = AuthctlVersion.current

    /// The Swift runtime reads the command line from /proc/self/cmdline: in a chroot or container
    /// without /proc every command would run as a bare `authctl` (the help, exit 0). Refused.
    static func main() {
        if CommandLine.arguments.count <= 1, access("/proc/self/cmdline", R_OK) != 0 {
            let reason = "/proc is not mounted (in a chroot or container, mount it: mount -t proc proc /proc)"
            let failure = AuthctlError(.configuration, "cannot read its command line: \(reason)")
            exit(withError: CommandExit.failing(failure, console: TerminalConsole(environment: [:])))
        }
        let arguments = GlobalOptions.withDebugFormat(Array(CommandLine.arguments.dropFirst()))
        // The hot commands' second front door: ArgumentParser's reflection would be most of the call.
        if let hot = FastPath.parse(arguments) {
            do {
                try hot.run()
            } catch let code as ExitCode {
                Glibc.exit(code.rawValue)
            } catch {
                exit(withError: error)
            }
            return
        }
        main(arguments)
    }

    static let configuration = CommandConfiguration(
        commandName: "authctl",
        abstract: "Sign in to Amazon Cognito user pools from the command line.",
        discussion: """
            Sessions are kept in the profile's store: the Secret Service (GNOME Keyring, KeePassXC) by \
            default, the kernel keyring, or an age-encrypted file (--store); never in a plain file.
            Exit codes: 0 ok, 1 unexpected error, 64 usage, 65 input rejected, 69 service unreachable, \
            3 an ops run stopped part-way (run it again to resume), 4 an ops run done with some users failed, \
            75 throttled, 77 not signed in or authentication failed, 78 configuration or secure store missing, \
            126 and 127 exec's command cannot be run or was not found, 141 stdout closed by its reader.
            """,
        version: version,
        subcommands: [
            SignIn.self,
            SignUp.self,
            ConfirmSignUp.self,
            ResendCode.self,
            ForgotPassword.self,
            SignOut.self,
            ChangePassword.self,
            WhoAmI.self,
            Account.self,
            Token.self,
            Exec.self,
            AWSCredentialsCommand.self,
            KubeToken.self,
            Status.self,
            MFA.self,
            Devices.self,
            Sessions.self,
            Store.self,
            Unlock.self,
            LockCommand.self,
            AgentCommand.self,
            Passkey.self,
            Configure.self,
            Ops.self,
        ]
    )
}

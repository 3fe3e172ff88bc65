import ArgumentParser
import AuthctlCore

/// `--fido-device` and `--pin-fd`: which security key, and where its PIN comes from (signin,
/// token, passkey add).
struct SecurityKeyOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The security key: a hidraw device (/dev/hidrawN), or unix:PATH, a virtual authenticator speaking CTAPHID over a Unix socket (env AUTHCTL_FIDO_DEVICE; default: the key attached, or the one touched of several). Given more than once: the one touched.",
            valueName: "path"))
    var fidoDevice: [String] = []

    @Option(
        help: ArgumentHelp(
            "Read the security key's PIN from the first line of this file descriptor (for scripts; asked without echo on the terminal, or through pinentry without one, otherwise; never on the command line).",
            valueName: "fd"))
    var pinFd: Int32?

    func validate() throws {
        if let pinFd, pinFd < 0 || pinFd == 1 || pinFd == 2 {
            throw ValidationError("--pin-fd: give an open file descriptor other than 1 and 2 (standard input is 0).")
        }
        if fidoDevice.contains(where: { $0.isEmpty || $0 == "unix:" }) {
            throw ValidationError("--fido-device: give a hidraw path or unix:PATH.")
        }
    }

    /// The choice, with AUTHCTL_FIDO_DEVICE where no --fido-device is given.
    func choice(environment: [String: String]) -> SecurityKeyChoice {
        let named = environment["AUTHCTL_FIDO_DEVICE"].flatMap { $0.isEmpty ? nil : [$0] } ?? []
        return SecurityKeyChoice(devicePaths: fidoDevice.isEmpty ? named : fidoDevice, pinFD: pinFd)
    }
}

import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `devices forget [DEVICE_KEY]`: ForgetDevice (this device by default, its keys deleted here),
/// or AdminForgetDevice for `--user NAME DEVICE_KEY`.
struct DevicesForget: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract:
            "Forget a device: this one by default (its keys are deleted here too), so the next sign-in asks for MFA again.",
        discussion: """
            With --user NAME DEVICE_KEY, an operator forgets any user's device (AdminForgetDevice, \
            signed with AWS credentials from the environment or ~/.aws/credentials; no session needed).
            """)

    @OptionGroup var global: GlobalOptions

    @Argument(
        help: ArgumentHelp(
            "The device key (see `authctl devices list`); default: this device.", valueName: "device-key"))
    var deviceKey: String?

    @Option(
        help: ArgumentHelp(
            "Operators: forget a device of this user (needs AWS credentials and DEVICE_KEY).", valueName: "username"))
    var user: String?

    @Flag(name: .shortAndLong, help: "With --user: do not ask for confirmation (required without a terminal).")
    var yes = false

    func validate() throws {
        if user != nil && deviceKey == nil {
            throw ValidationError(
                "--user forgets a device of another user: give its DEVICE_KEY (see `authctl devices list --user NAME`)."
            )
        }
        if let deviceKey,
            deviceKey.isEmpty || deviceKey.count > 55 || deviceKey.contains(where: { $0.isWhitespace || $0.isNewline })
        {
            throw ValidationError(
                "DEVICE_KEY must be a device key as `authctl devices list` shows it (at most 55 characters, no spaces)."
            )
        }
    }

    func execute(in context: CommandContext) throws {
        let settings = try context.settings
        let report =
            try user.map { try forgetAsOperator(user: $0, settings: settings, context: context) }
            ?? forgetOwn(settings: settings, context: context)
        context.emit(report)
    }

    private func forgetOwn(settings: Settings, context: CommandContext) throws -> DeviceForgetReport {
        let sessions = try context.profileSession
        let devices = RememberedDevices(context: context, profile: settings.profile)
        var mine: StoredDevice?
        let (session, key, outcome) = try sessions.withFreshSession {
            session, service -> (StoredSession, String, String) in
            mine = devices.device(userPoolId: session.userPoolId, username: session.username)
            guard let key = deviceKey ?? mine?.deviceKey else {
                throw AuthctlError(
                    .usage,
                    """
                    this machine keeps no remembered device for \(session.username) in \(session.userPoolId): \
                    give the DEVICE_KEY to forget (see `authctl devices list`)
                    """)
            }
            do {
                try service.forgetDevice(accessToken: session.accessToken, deviceKey: key)
                return (session, key, "forgotten")
            } catch let error as CognitoError where error.refusal == .resourceNotFound {
                // Forgotten already (elsewhere): this machine's keys for it are useless, removed below.
                guard mine?.deviceKey == key else {
                    throw AuthctlError(
                        .inputRejected,
                        "Cognito knows no device \(UntrustedText(key)) for \(session.username): \(UntrustedText(error.message))"
                    )
                }
                return (session, key, "unknown")
            }
        }
        var removedLocally = false
        if let mine, mine.deviceKey == key {
            do {
                try devices.store.forget(mine)
                removedLocally = true
            } catch {
                let failure = AuthctlError.from(error)
                throw AuthctlError(
                    failure.code,
                    "device \(key) was forgotten on Cognito, but its keys could not be deleted from this machine: \(failure.message)"
                )
            }
        }
        return DeviceForgetReport(
            user: session.username, userPoolId: session.userPoolId, deviceKey: key, service: outcome,
            removedLocally: removedLocally)
    }

    private func forgetAsOperator(user: String, settings: Settings, context: CommandContext) throws
        -> DeviceForgetReport
    {
        let key = deviceKey ?? ""
        let admin = try AdminService(context: context)
        try Confirmation.require(
            "Forget device \(key) of \(user)? Its next sign-in asks for MFA again. [y/N] ", confirmed: yes,
            console: context.console, withoutTerminal: "this forgets a device of \(user)")
        do {
            try admin.service.adminForgetDevice(userPoolId: admin.poolId, username: user, deviceKey: key)
        } catch let error as CognitoError {
            if error.refusal == .resourceNotFound {
                throw AuthctlError(
                    .inputRejected,
                    "Cognito knows no device \(UntrustedText(key)) for \(user) in \(admin.poolId): \(UntrustedText(error.message))"
                )
            }
            throw AdminService.refusal(error, username: user, poolId: admin.poolId)
                ?? AuthctlError.from(error, endpoint: admin.endpoint)
        }
        let local = LocalOperator(environment: context.environment)
        context.console.message(
            "audit: AdminForgetDevice user=\(user) device=\(key) pool=\(admin.poolId) by=\(admin.credentials.accessKeyId) (local user \(local.user), credentials from \(admin.source)\(local.claimNote)) at=\(Format.iso8601(context.now()))"
        )
        return DeviceForgetReport(
            user: user, userPoolId: admin.poolId, deviceKey: key, service: "forgotten", removedLocally: false)
    }
}

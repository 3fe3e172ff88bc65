import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `devices list`: ListDevices with the stored session, or AdminListDevices for `--user NAME`.
struct DevicesList: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the devices Cognito tracks for the signed-in user (* marks this one).",
        discussion: """
            With --user NAME, an operator lists any user's devices (AdminListDevices, signed with \
            AWS credentials from the environment or ~/.aws/credentials; no session needed).
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("Operators: list this user's devices (needs AWS credentials).", valueName: "username"))
    var user: String?

    func execute(in context: CommandContext) throws {
        let settings = try context.settings
        let report: DeviceListReport
        if let user {
            let admin = try AdminService(context: context)
            let devices: [DeviceType]
            do {
                devices = try admin.service.adminListDevices(userPoolId: admin.poolId, username: user)
            } catch let error as CognitoError {
                throw AdminService.refusal(error, username: user, poolId: admin.poolId)
                    ?? AuthctlError.from(error, endpoint: admin.endpoint)
            }
            report = DeviceListReport(
                user: user, userPoolId: admin.poolId,
                devices: devices.map { DeviceSummary($0, thisDeviceKey: nil) })
        } else {
            let sessions = try context.profileSession
            let (session, devices) = try sessions.withFreshSession { session, service in
                (session, try service.listDevices(accessToken: session.accessToken))
            }
            let mine = RememberedDevices(context: context, profile: settings.profile).device(
                userPoolId: session.userPoolId, username: session.username)
            report = DeviceListReport(
                user: session.username, userPoolId: session.userPoolId,
                devices: devices.map { DeviceSummary($0, thisDeviceKey: mine?.deviceKey) })
        }
        context.emit(report)
    }
}

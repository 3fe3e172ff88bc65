import ArgumentParser
import AuthctlCore
import CognitoClient

/// `authctl ops investigate`: what the service knows about a user (or a selection), read-only.
struct OpsInvestigate: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "investigate",
        abstract: "Show a user's account, factors, groups, devices, sessions and sign-in events (read-only).",
        discussion: """
            Per user: AdminGetUser (status, enabled, dates, MFA), AdminGetUserAuthFactors (factors; \
            SOFTWARE_TOKEN is MFA only), AdminListGroupsForUser, AdminListDevices (name, remembered, \
            last seen, last IP), the sessions the pool tracks, and AdminListUserAuthEvents, newest \
            first, up to --since / --max-events (time, type, response, risk level and decision, IP, \
            city and country, device). A pool without threat protection has no events: said, not \
            failed. Every string from the service is escaped; names and cities are cut at 256 \
            characters. Text for a person; --output json: one JSON object a user, a line each. \
            Changes nothing, asks nothing. Exit codes: 0, 65 no such user, 69, 77, 78 as `ops signout`.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var selection: UserSelectionOptions
    @OptionGroup var events: EventBoundOptions

    func validate() throws { try selection.requireOne() }

    /// A bulk run lasts as long as its users take at the quota's pace: `--timeout` bounds each
    /// request, and the ops engine retries.
    var timeoutScope: TimeoutScope { .eachRequest }

    func execute(in context: CommandContext) throws {
        let admin = try AdminService(context: context)
        let state = try OpsStateDirectory.open(environment: context.environment)
        let chosen = try selection.resolve(context, state)
        let read = QuotaPace.resolve(.userRead, explicit: nil, service: admin.service)
        let listing = QuotaPace.resolve(.userList, explicit: nil, service: admin.service)
        let operation = BulkOperation(
            service: admin.service, poolId: admin.poolId, action: .contain, selection: chosen, rate: 1,
            listingRate: listing.rate, readRate: read.rate, clock: MonotonicClock())
        let investigator = Investigator(poolId: admin.poolId, bounds: events.bounds(now: context.now()))
        let users = try operation.source(from: PageCursor())
        var count = 0
        while let page = try users.nextPage() {
            for username in page {
                let found: UserInvestigation
                do {
                    found = try investigator.investigate(username, service: admin.service) {
                        try operation.paced(operation.reads, $0)
                    }
                } catch let error as CognitoError {
                    if let refusal = AdminService.refusal(
                        error, username: UntrustedText(username).description, poolId: admin.poolId),
                        chosen != .users([username]) && error.refusal == .userNotFound
                    {
                        context.console.message("authctl: \(refusal.message)")
                        continue
                    }
                    throw AdminService.refusal(
                        error, username: UntrustedText(username).description, poolId: admin.poolId)
                        ?? AuthctlError.from(error, endpoint: admin.endpoint)
                }
                count += 1
                switch context.outputFormat {
                case .json: context.console.output(Format.json(found))
                case .text: found.text.forEach(context.console.output)
                }
            }
        }
        if count == 0 { context.console.message("authctl: the selection holds no user") }
    }
}

import ArgumentParser
import AuthctlCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `store doctor`: each store on this host, usable or what is missing and the fix.
struct StoreDoctor: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check each store on this host: usable, or what is missing and how to fix it.",
        discussion: """
            The profile's store is the one --store or AUTHCTL_STORE names, else the one recorded in \
            the profile, else secret-service. Exit 0 when it works, 78 when it does not. Never \
            prompts; the file store's passphrase comes from --passphrase-fd, AUTHCTL_STORE_PASSPHRASE_FILE, \
            $CREDENTIALS_DIRECTORY/authctl-passphrase or AUTHCTL_STORE_PASSPHRASE.
            """)

    @OptionGroup var global: GlobalOptions

    func execute(in context: CommandContext) throws {
        let environment = context.environment
        let profile = Defaults.profileName(option: global.profile, environment: environment)
        let intended = try context.backend.intended(profile: profile, environment: environment)
        var checks: [StoreCheck] = []
        for kind in StoreKind.allCases {
            let result = context.backend.check(kind, profile: profile, environment: environment, canPrompt: context.console.canPrompt)
            checks.append(StoreCheck(store: kind.rawValue, usable: result.usable, detail: result.detail, selected: kind == intended.kind))
        }
        var note: String?
        if let recorded = intended.recorded, let requested = intended.requested, requested.kind != recorded {
            note = StoreMessages.pinnedElsewhere(profile: profile, recorded: recorded, configFile: ConfigFile.defaultPath(environment: environment),
                                                 requested: requested.kind, origin: requested.origin)
        }
        let report = StoreDoctorReport(profile: profile, store: intended.kind.rawValue, recorded: intended.recorded != nil,
                                       stores: checks, problem: note)
        context.emit(report)
        if note != nil || checks.first(where: \.selected)?.usable != true {
            throw AuthctlError.reported(.configuration)
        }
    }
}

struct StoreDoctorReport: CommandReport {
    var profile: String
    /// The profile's store.
    var store: String
    /// Whether it is recorded in the profile's config.
    var recorded: Bool
    var stores: [StoreCheck]
    @Nullable var problem: String?

    var textOutput: [String] {
        let width = stores.map(\.store.count).max() ?? 0
        return stores.map { check in
            let marker = check.selected ? "*" : " "
            let name = check.store + String(repeating: " ", count: width - check.store.count)
            return "\(marker) \(name)  \(check.usable ? "usable" : "NOT USABLE"): \(check.detail)"
        }
    }

    var textMessages: [String] {
        var lines = ["(* the store of profile \(profile)\(recorded ? ", recorded in its config" : ""))"]
        if let problem { lines.append(problem) }
        return lines
    }
}

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
            let result = context.backend.check(
                kind, profile: profile, environment: environment, canPrompt: context.console.canPrompt)
            checks.append(
                StoreCheck(
                    store: kind.rawValue, usable: result.usable, detail: result.detail, selected: kind == intended.kind)
            )
        }
        var note: String?
        if let recorded = intended.recorded, let requested = intended.requested, requested.kind != recorded {
            note = StoreMessages.pinnedElsewhere(
                profile: profile, recorded: recorded, configFile: ConfigFile.defaultPath(environment: environment),
                requested: requested.kind, origin: requested.origin)
        }
        var leftover: String?
        if let copy = try StoreRecord.migratingTo(profile: profile, environment: environment) {
            let flag = StoreMessages.profileFlag(profile)
            leftover =
                "an interrupted `authctl store migrate --to \(copy.rawValue)` left a copy of profile \(profile)'s items "
                + "in \(copy.name): finish it with `authctl store migrate --to \(copy.rawValue)\(flag)`, or remove the copy "
                + "with `authctl store migrate --to \(intended.kind.rawValue)\(flag)`"
        }
        let usable = Set(checks.filter(\.usable).map(\.store))
        let recommended: String
        if usable.contains(StoreKind.secretService.rawValue) {
            recommended = StoreKind.secretService.rawValue
        } else if usable.contains(StoreKind.kernelKeyring.rawValue) {
            recommended = StoreKind.kernelKeyring.rawValue
        } else {
            recommended = StoreKind.file.rawValue
        }
        let report = StoreDoctorReport(
            profile: profile, store: intended.kind.rawValue, recorded: intended.recorded != nil,
            stores: checks, problem: note, leftoverCopy: leftover, recommended: recommended)
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
    /// What an interrupted migration left in another store, and the two ways out.
    @Nullable var leftoverCopy: String?
    /// The store recommended on this host: the Secret Service when it works, else the kernel
    /// keyring (lost at reboot), else the file store with `authctl unlock`.
    var recommended: String

    var recommendation: String {
        switch StoreKind(rawValue: recommended) {
        case .secretService?: return "recommended here: secret-service (the desktop keyring works)"
        case .kernelKeyring?:
            return "recommended here: kernel-keyring (no Secret Service; kernel memory, lost at reboot): "
                + "authctl configure --store kernel-keyring"
        default:
            return "recommended here: file (neither a Secret Service nor keyctl works): "
                + "authctl configure --store file, then `authctl unlock` once per session"
        }
    }

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
        if let leftoverCopy { lines.append(leftoverCopy) }
        lines.append(recommendation)
        return lines
    }
}

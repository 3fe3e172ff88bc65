import ArgumentParser
import AuthctlCore
import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

struct AccountUpdate: AuthctlCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Change the signed-in user's attributes (UpdateUserAttributes).",
        discussion: """
            Before an email or phone number changes, says whether the pool keeps the current value until \
            the new one is verified. When it does not (or that cannot be read: it needs AWS credentials \
            allowed DescribeUserPool), the new value is in force at once and unverified, which can lock \
            the user out: authctl warns and asks, and needs --yes without a terminal. \
            A code is sent to a new email or phone number: enter it with `authctl account verify`.
            """)

    @OptionGroup var global: GlobalOptions

    @Option(help: ArgumentHelp("A new email address.", valueName: "address"))
    var email: String?

    @Option(help: ArgumentHelp("A new phone number, E.164 (+15555550123).", valueName: "number"))
    var phone: String?

    @Option(
        name: .customLong("attribute"),
        help: ArgumentHelp(
            "Another attribute, name=value (custom ones as custom:name=value); repeatable.", valueName: "name=value"))
    var attributes: [String] = []

    @Flag(
        name: .shortAndLong,
        help:
            "Change an email or phone number without asking, even where the pool does not keep the old one (required without a terminal)."
    )
    var yes = false

    func validate() throws {
        if email == nil && phone == nil && attributes.isEmpty {
            throw ValidationError("nothing to change: give --email, --phone or --attribute name=value.")
        }
        _ = try changes()
    }

    /// The attributes asked for, in order, each name once.
    func changes() throws -> [AttributeType] {
        var list: [AttributeType] = []
        if let email {
            guard email.contains("@"), !email.contains(where: { $0.isWhitespace }) else {
                throw ValidationError("--email: \"\(UntrustedText(email))\" is not an email address.")
            }
            list.append(AttributeType(name: "email", value: email))
        }
        if let phone {
            guard phone.first == "+", (5...16).contains(phone.count),
                phone.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber })
            else {
                throw ValidationError(
                    "--phone: \"\(UntrustedText(phone))\" is not a phone number in E.164 form, e.g. +15555550123.")
            }
            list.append(AttributeType(name: "phone_number", value: phone))
        }
        for pair in attributes {
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("--attribute: \"\(UntrustedText(pair))\" is not name=value.")
            }
            let name = String(pair[..<equals])
            let value = String(pair[pair.index(after: equals)...])
            if name == "sub" || name.hasSuffix("_verified") {
                throw ValidationError("--attribute: \(UntrustedText(name)) is set by the pool, not by the user.")
            }
            if let attribute = VerifiableAttribute(rawValue: name) {
                throw ValidationError(
                    "--attribute: change \(attribute.rawValue) with --\(attribute == .email ? "email" : "phone").")
            }
            list.append(AttributeType(name: name, value: value))
        }
        let names = list.map(\.name)
        if let repeated = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw ValidationError("--attribute: \(UntrustedText(repeated)) is given twice.")
        }
        return list
    }

    func execute(in context: CommandContext) throws {
        let settings = try context.settings
        let sessions = try context.profileSession
        let stored = try sessions.signedIn()
        let changes = try changes()
        let addresses = changes.compactMap { VerifiableAttribute(rawValue: $0.name) }

        var pool = PoolAttributeSettings.Answer.known(keptUntilVerified: [])
        if !addresses.isEmpty {
            pool = PoolAttributeSettings.read(settings: settings, context: context)
            try confirm(addresses, pool: pool, username: stored.username, context: context)
        }

        let answer = try AccountSettings.write(sessions, attribute: addresses.first?.rawValue) { session, service in
            try service.updateUserAttributes(accessToken: session.accessToken, attributes: changes)
        }
        // What is in force now tells whether the pool kept the old value (the answer does not).
        let user = try? sessions.withFreshSession { session, service in
            try service.getUser(accessToken: session.accessToken)
        }
        let deliveries = answer.codeDeliveryDetailsList ?? []
        let states = addresses.map { attribute -> AddressChange in
            let asked = changes.first { $0.name == attribute.rawValue }?.value ?? ""
            let delivery = deliveries.first { $0.attributeName == attribute.rawValue }
            guard let user else {
                return AddressChange(
                    attribute: attribute, requested: asked, inForce: nil, verified: false,
                    keptUntilVerified: pool.keeps(attribute), codeDelivery: delivery)
            }
            let now = user.attribute(attribute.rawValue)
            return AddressChange(
                attribute: attribute, requested: asked, inForce: now,
                verified: user.attribute(attribute.verifiedFlag) == "true" && now == asked,
                keptUntilVerified: now != asked, codeDelivery: delivery)
        }
        context.emit(AccountUpdateReport(updated: changes.map(\.name), addresses: states))
    }

    /// Says what the pool does with the old value; asks (or needs --yes) where it does not keep it.
    private func confirm(
        _ addresses: [VerifiableAttribute], pool: PoolAttributeSettings.Answer, username: String,
        context: CommandContext
    ) throws {
        var risky: [VerifiableAttribute] = []
        for attribute in addresses {
            switch pool.keeps(attribute) {
            case true?:
                context.console.message(
                    "This pool keeps your current \(attribute.words) until the new one is verified: you go on signing in and receiving codes with it meanwhile."
                )
            case false?:
                context.console.message(
                    "authctl: warning: this pool does not keep your current \(attribute.words): the new one is in force at once, unverified, until you enter the code sent to it. If it is mistyped or you cannot receive that code, you may be unable to sign in with it or reset your password."
                )
                risky.append(attribute)
            case nil:
                if case .unknown(let reason) = pool {
                    context.console.message(
                        "authctl: warning: authctl cannot tell whether this pool keeps your current \(attribute.words) until the new one is verified (\(reason)). If it does not, the new one is in force at once, unverified: if it is mistyped or you cannot receive the code sent to it, you may be unable to sign in with it or reset your password. After the change, authctl reads your attributes back and says which it was."
                    )
                }
                risky.append(attribute)
            }
        }
        guard !risky.isEmpty else { return }
        let what = risky.map(\.words).joined(separator: " and ")
        try Confirmation.require(
            "Change the \(what) of \(UntrustedText(username)) anyway? [y/N] ", confirmed: yes,
            console: context.console,
            withoutTerminal: "the pool may not keep the current \(what) until the new one is verified")
    }
}

/// One email or phone number change, as it stands after the update.
struct AddressChange: Encodable {
    var attribute: VerifiableAttribute
    var requested: String
    /// The value the pool has now (nil when it could not be read back).
    @Nullable var inForce: String?
    var verified: Bool
    /// True: the old value stays until the new one is verified; nil: unknown.
    @Nullable var keptUntilVerified: Bool?
    @Nullable var codeDelivery: CodeDeliveryDetails?
}

/// `account update --output json`.
struct AccountUpdateReport: CommandReport {
    var updated: [String]
    var addresses: [AddressChange]

    var textMessages: [String] {
        var lines = ["Updated: \(updated.map { UntrustedText($0).description }.joined(separator: ", "))."]
        for change in addresses where !change.verified {
            // What to do next: enter the code sent, or (none was sent) have one sent and enter it.
            let verify = "authctl account verify \(change.attribute.rawValue)"
            let next =
                change.codeDelivery.map {
                    "a code was sent to \(CodeDeliveryText.describe($0)); enter it with: \(verify) --no-send"
                } ?? "no code was sent; \(verify) sends one and asks for it"
            switch change.keptUntilVerified {
            case true?:
                let current = change.inForce.map { " (\(UntrustedText($0)))" } ?? ""
                lines.append(
                    "Your \(change.attribute.words) stays the current one\(current) until the new one is verified: \(next)"
                )
            case false?:
                lines.append(
                    "Your \(change.attribute.words) is now \(UntrustedText(change.requested)), not verified yet: \(next)"
                )
            case nil:
                // Neither DescribeUserPool (no AWS credentials) nor the read-back (GetUser failed) told.
                lines.append(
                    "Your \(change.attribute.words) was changed to \(UntrustedText(change.requested)), not verified yet; authctl could not read your attributes back, so whether the current one stays in force until then is unknown (see `authctl whoami`): \(next)"
                )
            }
        }
        return lines
    }
}

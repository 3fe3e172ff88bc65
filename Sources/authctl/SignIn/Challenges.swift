import ArgumentParser
import CognitoClient
import Foundation
import LocalFormats
import SecureStore

enum MFAType: String, ExpressibleByArgument, CaseIterable {
    case totp, sms, email

    var challengeName: ChallengeName {
        switch self {
        case .totp: return .softwareTokenMFA
        case .sms: return .smsMFA
        case .email: return .emailOTP
        }
    }

    /// The factor a challenge name (or an MFA setting, which uses the same names) stands for.
    static func from(challengeName: String) -> MFAType? {
        allCases.first { $0.challengeName.rawValue == challengeName }
    }

    var words: String {
        switch self {
        case .totp: return "authenticator app (TOTP)"
        case .sms: return "text message (SMS)"
        case .email: return "email"
        }
    }
}

enum MFASetupOutput: String, ExpressibleByArgument, CaseIterable {
    case json
}

/// Options for sign-in challenges (multi-factor authentication), shared by `signin` and `token`.
struct MFAOptions: ParsableArguments {
    @Option(name: [.customLong("code"), .customLong("mfa-code")],
            help: ArgumentHelp("One-time code for the sign-in (authenticator app, SMS or email; --mfa-code is the same). It is dead within minutes, so the command line is acceptable.", valueName: "code"))
    var mfaCode: String?

    @Option(help: "Factor to use when the pool lets the user choose: totp, sms or email.")
    var mfaType: MFAType?
}

/// `signin` only: handing an authenticator set-up to a script.
struct MFASetupOptions: ParsableArguments {
    @Option(help: "When the pool requires setting up an authenticator app: print its secret and otpauth:// URI as json (even on a terminal), then finish with `authctl signin --code CODE`.")
    var mfaSetupOutput: MFASetupOutput?
}

/// How a one-time code looks. The service model: VerifySoftwareToken's UserCode is `[0-9]{6}`;
/// challenge answers are free strings, and Cognito sends 6-digit SMS codes and 6- or 8-digit
/// email codes.
enum CodeFormat {
    /// An authenticator app's code: 6 digits.
    case authenticator
    /// A code sent by text message or email: 6 to 8 digits.
    case delivered
    /// Not known yet (a code given before the challenge is seen): 6 to 8 digits.
    case any

    var digits: ClosedRange<Int> {
        switch self {
        case .authenticator: return 6...6
        case .delivered, .any: return 6...8
        }
    }

    var rule: String {
        switch self {
        case .authenticator: return "a code from the authenticator app is 6 digits, e.g. 123456"
        case .delivered: return "the code sent to you is 6 to 8 digits, e.g. 123456"
        case .any: return "a one-time code is 6 to 8 digits, e.g. 123456"
        }
    }
}

/// Where a `PendingChallenge` (LocalFormats) is kept: one Secret Service item per profile.
extension PendingChallenge {
    static let kind = "pending-challenge"

    static func key(profile: String) -> SecretKey { SecretKey(kind: kind, profile: profile) }

    /// The pending sign-in of `profile`, expired or not (the caller tells the person which).
    static func load(_ store: SecretStore, profile: String) throws -> PendingChallenge? {
        guard let json = try store.read(key(profile: profile)) else { return nil }
        guard let pending = try? StoredSession.decoder.decode(PendingChallenge.self, from: Data(json.utf8)) else {
            _ = try? store.delete(key(profile: profile))
            return nil
        }
        return pending
    }

    static func discard(_ store: SecretStore, profile: String) {
        _ = try? store.delete(key(profile: profile))
    }

    func save(_ store: SecretStore, profile: String) throws {
        let data = try StoredSession.encoder.encode(self)
        let what = challengeName == .mfaSetup ? "authenticator set-up" : "sign-in code"
        try store.write(SecretKey(kind: Self.kind, profile: profile, userPoolId: userPoolId, clientId: clientId),
                        label: "authctl pending \(what): \(displayName) (profile \(profile))",
                        secret: String(decoding: data, as: UTF8.self))
    }

    /// `authctl signin --code CODE`, with the profile when it is not the default one.
    static func nextCommand(profile: String) -> String {
        profile == Defaults.profile ? "authctl signin --code CODE" : "authctl signin --profile \(profile) --code CODE"
    }
}

/// Stops a sign-in after the authenticator secret was handed to a script.
struct MFASetupHandedOver: Error {}

/// A one-time code the service refused where no one can be asked for another.
struct CodeDidNotMatch: Error {}

/// Counts the codes refused during one sign-in, to tell "too many wrong codes" from "too slow"
/// when the service ends the challenge session.
final class ChallengeLog {
    var wrongCodes = 0
}

/// Answers the challenges that need the person: a new password, one-time codes, the choice
/// of a factor, and setting up an authenticator app.
struct ChallengeResponder {
    let context: CommandContext
    let settings: Settings
    let client: ClientSettings
    let service: CognitoService
    let mfa: MFAOptions
    /// `--mfa-setup-output` (signin only).
    var setupOutput: MFASetupOutput? = nil
    /// The name the person gave, for the authenticator's label and the pending sign-in.
    var typedUsername: String? = nil
    let log = ChallengeLog()
    let newPassword: () throws -> String

    static var friendlyName: String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0 ? String(cString: name) : "this machine"
        return "authctl on \(host)"
    }

    var console: Console { context.console }

    func answer(_ challenge: AuthChallenge) throws -> ChallengeAnswer {
        let name = challenge.name
        switch name {
        case .newPasswordRequired:
            return ["NEW_PASSWORD": try newPassword()]
        case .softwareTokenMFA:
            return [ChallengeName.softwareTokenMFA.codeField!: try code(for: challenge, prompt: "Authenticator code: ", format: .authenticator)]
        case _ where name.isDeliveredCode:
            let destination = challenge.parameters["CODE_DELIVERY_DESTINATION"]
            if challenge.attempt == 1 {
                console.message("Code sent to \(destination.map { OutsideText($0).description } ?? "your \(name == .emailOTP ? "email address" : "phone")")")
                if mfa.mfaCode == nil && !console.canPrompt {
                    try keepWaiting(challenge, destination: destination)
                }
            }
            let prompt = name == .emailOTP ? "Code from the email: " : "Code from the text message: "
            return [name.codeField!: try code(for: challenge, prompt: prompt, format: .delivered)]
        case .selectMFAType:
            return ["ANSWER": try chooseFactor(challenge).rawValue]
        case .mfaSetup:
            return try setUpAuthenticator(challenge)
        default:
            throw CognitoError.unsupportedChallenge(name)
        }
    }

    /// The one-time code: `--code` first, then the terminal; after a mismatch only the terminal.
    private func code(for challenge: AuthChallenge, prompt: String, format: CodeFormat) throws -> String {
        if challenge.attempt > 1 {
            log.wrongCodes += 1
            guard console.canPrompt else { throw CodeDidNotMatch() }
            console.message(Messages.codeDidNotMatchTryAgain)
        } else if let given = mfa.mfaCode {
            do {
                return try Self.normalized(given, format: format)
            } catch let error as AuthctlError where console.canPrompt {
                console.message("--code: \(error.message).")
            }
        } else if !console.canPrompt {
            throw AuthctlError(.usage, "this sign-in needs a one-time code (\(challenge.name)): pass --code CODE, or run on a terminal")
        }
        return try Self.typedCode(console: console, prompt: prompt, format: format)
    }

    /// Asks until the person types a well-formed code (nothing is sent for a typo).
    static func typedCode(console: Console, prompt: String, format: CodeFormat) throws -> String {
        for _ in 0..<5 {
            guard let typed = console.prompt(prompt, secret: false) else {
                throw AuthctlError(.usage, "no code given")
            }
            do {
                return try normalized(typed, format: format)
            } catch let error as AuthctlError {
                console.message("That is not a code: \(error.message); try again.")
            }
        }
        throw AuthctlError(.inputRejected, "no well-formed code after 5 tries: \(format.rule)")
    }

    /// The digits of a code as a person may write it (`123 456`, `123-456`), checked against `format`.
    static func normalized(_ code: String, format: CodeFormat = .any) throws -> String {
        let digits = code.filter { !$0.isWhitespace && $0 != "-" }
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), format.digits.contains(digits.count) else {
            throw AuthctlError(.inputRejected, format.rule)
        }
        return digits
    }

    /// No one to ask for a code that was already sent: keep the challenge in the Secret Service
    /// for `authctl signin --code CODE`, rather than start over (and send another code) later.
    private func keepWaiting(_ challenge: AuthChallenge, destination: String?) throws -> Never {
        let where_ = destination.map { " to \(OutsideText($0))" } ?? ""
        guard let session = challenge.session else {
            throw AuthctlError(.usage, "this sign-in needs the code sent\(where_): pass --code CODE, or run on a terminal")
        }
        let pending = PendingChallenge(
            challengeName: challenge.name, session: session, username: challenge.username,
            typedUsername: typedUsername.flatMap { $0 == challenge.username ? nil : $0 },
            userPoolId: client.userPoolId, clientId: client.clientId, expiresAt: context.now().addingTimeInterval(180),
            destination: destination, verified: false, wrongCodes: 0)
        do {
            try pending.save(context.store, profile: settings.profile)
        } catch let error as SecureStoreError {
            // Another run would start another sign-in and send another code, so --code with
            // this one can never match: only a terminal or a Secret Service can help.
            throw AuthctlError(.configuration, """
                this sign-in needs the code sent\(where_), and without the Secret Service (\(error.message)) it cannot wait \
                for a second run (which would send a new code): run it on a terminal, or where a Secret Service is reachable
                """)
        }
        throw AuthctlError(.usage, "the sign-in waits for the code sent\(where_): within 3 minutes run \(PendingChallenge.nextCommand(profile: settings.profile))")
    }

    private func chooseFactor(_ challenge: AuthChallenge) throws -> ChallengeName {
        let offered = Self.offeredFactors(challenge.parameters["MFAS_CAN_CHOOSE"])
        guard !offered.isEmpty else {
            throw CognitoError.malformed("SELECT_MFA_TYPE offered no factor", status: 200)
        }
        if let wanted = mfa.mfaType {
            guard offered.contains(wanted) else {
                throw AuthctlError(.inputRejected, "--mfa-type \(wanted.rawValue) is not offered for this account; offered: \(offered.map(\.rawValue).joined(separator: ", "))")
            }
            return wanted.challengeName
        }
        if offered.count == 1 { return offered[0].challengeName }
        guard console.canPrompt else {
            throw AuthctlError(.usage, "choose a second factor with --mfa-type: \(offered.map(\.rawValue).joined(separator: ", "))")
        }
        console.message("Choose how to receive your sign-in code:")
        for (index, factor) in offered.enumerated() {
            console.message("  \(index + 1). \(factor.words)")
        }
        for _ in 0..<3 {
            let answer = console.prompt("Number [1-\(offered.count)]: ", secret: false)?.trimmingCharacters(in: .whitespaces) ?? ""
            if let number = Int(answer), (1...offered.count).contains(number) {
                return offered[number - 1].challengeName
            }
            if let byName = offered.first(where: { $0.rawValue == answer.lowercased() }) {
                return byName.challengeName
            }
            console.message("Please answer with a number from 1 to \(offered.count).")
        }
        throw AuthctlError(.usage, "no factor chosen")
    }

    /// MFAS_CAN_CHOOSE / MFAS_CAN_SETUP are JSON arrays of challenge names, e.g. `["SMS_MFA","SOFTWARE_TOKEN_MFA"]`.
    static func offeredFactors(_ parameter: String?) -> [MFAType] {
        guard let data = parameter?.data(using: .utf8),
              let names = try? JSONDecoder().decode([String].self, from: data) else { return [] }
        return names.compactMap(MFAType.from(challengeName:))
    }

    private func setUpAuthenticator(_ challenge: AuthChallenge) throws -> ChallengeAnswer {
        if let offered = challenge.parameters["MFAS_CAN_SETUP"], !offered.isEmpty,
           !Self.offeredFactors(offered).contains(.totp) {
            throw AuthctlError(.unexpected, "this pool requires setting up \(offered), which authctl cannot do yet; only authenticator apps are supported")
        }
        // --mfa-setup-output json is honoured on a terminal too: the script asked for it.
        let handOver = setupOutput != nil
        if !handOver && !console.canPrompt {
            throw AuthctlError(.usage, "this account must set up an authenticator app first: run on a terminal, or pass --mfa-setup-output json and then finish with `\(PendingChallenge.nextCommand(profile: settings.profile))`")
        }
        if handOver {
            // The second process finds the challenge in the Secret Service: check it is there
            // before the service hands out a secret that would go nowhere.
            do {
                _ = try context.store.read(PendingChallenge.key(profile: settings.profile))
            } catch let error as SecureStoreError {
                throw AuthctlError(.configuration, """
                    --mfa-setup-output json: finishing the authenticator set-up in a second process \
                    (`authctl signin --code CODE`) keeps the challenge in the Secret Service, which cannot be reached \
                    (\(error.message)); run authctl signin on a terminal instead
                    """)
            }
        }
        let association = try service.associateSoftwareToken(session: challenge.session)
        let label = typedUsername ?? challenge.username
        let uri = AuthenticatorURI.otpauth(secret: association.secretCode, username: label, issuer: client.userPoolId)
        let session = association.session ?? challenge.session ?? ""

        if handOver {
            let expiresAt = context.now().addingTimeInterval(180)
            try PendingChallenge(challengeName: .mfaSetup, session: session, username: challenge.username,
                                 typedUsername: typedUsername.flatMap { $0 == challenge.username ? nil : $0 },
                                 userPoolId: client.userPoolId, clientId: client.clientId, expiresAt: expiresAt,
                                 destination: nil, verified: false, wrongCodes: 0)
                .save(context.store, profile: settings.profile)
            context.printJSON(MFASetupHandout(secretCode: association.secretCode, otpauthUri: uri, username: challenge.username,
                                              expiresAt: expiresAt, next: PendingChallenge.nextCommand(profile: settings.profile)))
            throw MFASetupHandedOver()
        }

        try AuthenticatorEnrolment.show(secret: association.secretCode, uri: uri, context: context)
        let verified = try AuthenticatorEnrolment.verify(context: context) { code in
            try service.verifySoftwareToken(session: session, code: code, friendlyName: Self.friendlyName)
        }
        return ChallengeAnswer(responses: [:], session: verified.session ?? session)
    }
}

/// `--mfa-setup-output json`.
struct MFASetupHandout: Encodable {
    var secretCode: String
    var otpauthUri: String
    var username: String
    var expiresAt: Date
    var next: String
}

/// Showing a new authenticator secret and checking the first code, shared by sign-in's
/// MFA_SETUP and `authctl mfa setup`.
enum AuthenticatorEnrolment {
    static func show(secret: String, uri: String, context: CommandContext) throws {
        let console = context.console
        console.message("Set up your authenticator app: scan this QR code, or enter the secret by hand.")
        let colors = context.environment["NO_COLOR"] == nil && isatty(STDERR_FILENO) == 1
        let code: TerminalQRCode
        do {
            code = try TerminalQRCode(encoding: uri)
        } catch let failure as TerminalQRCode.Failure {
            throw AuthctlError(.unexpected, failure.description)
        }
        console.drawing(code.render(colors: colors))
        console.message("Secret (Base32): \(secret)")
        console.message("URI: \(uri)")
        if !colors {
            console.message("(The QR code is drawn without colours, for a dark background: on a light one it shows inverted, which some apps cannot scan; then enter the secret.)")
        }
    }

    /// Asks for the app's first code until the service accepts one (3 codes; a malformed one is
    /// asked again without being sent). `send` throws `CodeDidNotMatch` or the service's
    /// CodeMismatchException / EnableSoftwareTokenMFAException for a wrong code.
    static func verify(context: CommandContext, _ send: (String) throws -> VerifySoftwareTokenResponse) throws -> VerifySoftwareTokenResponse {
        for attempt in 1...3 {
            let code = try ChallengeResponder.typedCode(console: context.console, prompt: "Code from the app: ", format: .authenticator)
            do {
                let result = try send(code)
                if result.status == nil || result.status == "SUCCESS" { return result }
            } catch let error as CognitoError where isMismatch(error) {
            } catch is CodeDidNotMatch {
            }
            if attempt < 3 { context.console.message("The code did not match; wait for the next one and try again.") }
        }
        throw AuthctlError(.notAuthorized, "The code did not match three times; start again")
    }

    static func isMismatch(_ error: CognitoError) -> Bool {
        error.refusal == .codeMismatch
    }
}

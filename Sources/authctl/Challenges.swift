import ArgumentParser
import CognitoClient
import Foundation
import SecureStore

enum MFAType: String, ExpressibleByArgument, CaseIterable {
    case totp, sms, email

    var challengeName: String {
        switch self {
        case .totp: return "SOFTWARE_TOKEN_MFA"
        case .sms: return "SMS_MFA"
        case .email: return "EMAIL_OTP"
        }
    }

    static func from(challengeName: String) -> MFAType? {
        allCases.first { $0.challengeName == challengeName }
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

/// Options for sign-in challenges (multi-factor authentication).
struct MFAOptions: ParsableArguments {
    @Option(help: ArgumentHelp("One-time code for the MFA challenge (authenticator app, SMS or email). It is dead within minutes, so the command line is acceptable.", valueName: "code"))
    var mfaCode: String?

    @Option(help: "Factor to use when the pool lets the user choose: totp, sms or email.")
    var mfaType: MFAType?

    @Option(help: "Without a terminal, when the pool requires setting up an authenticator app: print its secret and otpauth:// URI as json, then finish with `authctl signin --mfa-code CODE`.")
    var mfaSetupOutput: MFASetupOutput?
}

/// An authenticator set-up that a script finishes in a second process (`--mfa-setup-output json`
/// then `--mfa-code`). Kept in the Secret Service: the session is a credential for 3 minutes.
struct PendingMFASetup: Codable {
    var session: String
    var username: String
    var userPoolId: String
    var clientId: String
    var expiresAt: Date

    static func key(profile: String) -> SecretKey { SecretKey(kind: "pending-mfa-setup", profile: profile) }

    static func load(_ store: SecretStore, profile: String, now: Date) throws -> PendingMFASetup? {
        guard let json = try store.read(key(profile: profile)),
              let pending = try? StoredSession.decoder.decode(PendingMFASetup.self, from: Data(json.utf8)) else { return nil }
        guard pending.expiresAt > now else {
            _ = try? store.delete(key(profile: profile))
            return nil
        }
        return pending
    }

    func save(_ store: SecretStore, profile: String) throws {
        let data = try StoredSession.encoder.encode(self)
        try store.write(SecretKey(kind: "pending-mfa-setup", profile: profile, userPoolId: userPoolId, clientId: clientId),
                        label: "authctl pending authenticator set-up: \(username) (profile \(profile))",
                        secret: String(decoding: data, as: UTF8.self))
    }
}

/// Stops a sign-in after the authenticator secret was handed to a script.
struct MFASetupHandedOver: Error {}

/// Answers the challenges that need the person: a new password, one-time codes, the choice
/// of a factor, and setting up an authenticator app.
struct ChallengeResponder {
    let context: CommandContext
    let settings: Settings
    let client: ClientSettings
    let service: CognitoService
    let mfa: MFAOptions
    let newPassword: () throws -> String

    static var friendlyName: String {
        var name = [CChar](repeating: 0, count: 256)
        let host = gethostname(&name, name.count) == 0 ? String(cString: name) : "this machine"
        return "authctl on \(host)"
    }

    var console: Console { context.console }

    func answer(_ challenge: AuthChallenge) throws -> ChallengeAnswer {
        switch challenge.name {
        case "NEW_PASSWORD_REQUIRED":
            return ["NEW_PASSWORD": try newPassword()]
        case "SOFTWARE_TOKEN_MFA":
            return ["SOFTWARE_TOKEN_MFA_CODE": try code(for: challenge, prompt: "Authenticator code: ")]
        case "SMS_MFA", "SMS_OTP", "EMAIL_OTP":
            if challenge.attempt == 1 {
                let destination = challenge.parameters["CODE_DELIVERY_DESTINATION"] ?? "your \(challenge.name == "EMAIL_OTP" ? "email address" : "phone")"
                console.message("Code sent to \(destination)")
            }
            let field = challenge.name == "SMS_MFA" ? "SMS_MFA_CODE" : challenge.name + "_CODE"
            let prompt = challenge.name == "EMAIL_OTP" ? "Code from the email: " : "Code from the text message: "
            return [field: try code(for: challenge, prompt: prompt)]
        case "SELECT_MFA_TYPE":
            return ["ANSWER": try chooseFactor(challenge)]
        case "MFA_SETUP":
            return try setUpAuthenticator(challenge)
        default:
            throw CognitoError.unsupportedChallenge(challenge.name)
        }
    }

    /// The one-time code: `--mfa-code` first, then the terminal; after a mismatch only the terminal.
    private func code(for challenge: AuthChallenge, prompt: String) throws -> String {
        if challenge.attempt > 1 {
            guard console.isInteractive else { throw AuthctlError(.notAuthorized, "The code did not match") }
            console.message("The code did not match; try again.")
        } else if let given = mfa.mfaCode {
            return try Self.normalized(given)
        }
        guard console.isInteractive else {
            throw AuthctlError(.usage, "this sign-in needs a one-time code (\(challenge.name)): pass --mfa-code CODE")
        }
        guard let typed = console.prompt(prompt, secret: false) else {
            throw AuthctlError(.usage, "no code given")
        }
        return try Self.normalized(typed)
    }

    static func normalized(_ code: String) throws -> String {
        let digits = code.filter { !$0.isWhitespace && $0 != "-" }
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber), digits.count <= 10 else {
            throw AuthctlError(.inputRejected, "a one-time code is digits only, e.g. 123456")
        }
        return digits
    }

    private func chooseFactor(_ challenge: AuthChallenge) throws -> String {
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
        guard console.isInteractive else {
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
        if !console.isInteractive && mfa.mfaSetupOutput == nil {
            throw AuthctlError(.usage, "this account must set up an authenticator app first: run on a terminal, or pass --mfa-setup-output json and then finish with `authctl signin --mfa-code CODE`")
        }
        let association = try service.associateSoftwareToken(session: challenge.session)
        let uri = AuthenticatorEnrolment.uri(secret: association.secretCode, username: challenge.username, issuer: client.userPoolId)
        let session = association.session ?? challenge.session ?? ""

        if !console.isInteractive {
            let expiresAt = context.now().addingTimeInterval(180)
            try PendingMFASetup(session: session, username: challenge.username, userPoolId: client.userPoolId,
                                clientId: client.clientId, expiresAt: expiresAt)
                .save(context.store, profile: settings.profile)
            context.printJSON(MFASetupHandout(secretCode: association.secretCode, otpauthUri: uri, username: challenge.username,
                                              expiresAt: expiresAt, next: "authctl signin --mfa-code CODE"))
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
    /// `otpauth://totp/<issuer>:<username>?secret=...&issuer=...` (Key Uri Format).
    static func uri(secret: String, username: String, issuer: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let label = (issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? issuer) + ":"
            + (username.addingPercentEncoding(withAllowedCharacters: allowed) ?? username)
        let encodedIssuer = issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? issuer
        return "otpauth://totp/\(label)?secret=\(secret)&issuer=\(encodedIssuer)"
    }

    static func show(secret: String, uri: String, context: CommandContext) throws {
        let console = context.console
        console.message("Set up your authenticator app: scan this QR code, or enter the secret by hand.")
        let colors = context.environment["NO_COLOR"] == nil && isatty(STDERR_FILENO) == 1
        console.message(try TerminalQRCode(encoding: uri).render(colors: colors))
        console.message("Secret (Base32): \(secret)")
        console.message("URI: \(uri)")
    }

    /// Asks for the app's first code until the service accepts it (3 tries).
    static func verify(context: CommandContext, _ send: (String) throws -> VerifySoftwareTokenResponse) throws -> VerifySoftwareTokenResponse {
        for attempt in 1...3 {
            guard let typed = context.console.prompt("Code from the app: ", secret: false) else {
                throw AuthctlError(.usage, "no code given")
            }
            do {
                let result = try send(try ChallengeResponder.normalized(typed))
                if result.status == nil || result.status == "SUCCESS" { return result }
            } catch let error as CognitoError where error.isType("CodeMismatchException", "EnableSoftwareTokenMFAException") && attempt < 3 {
                context.console.message("The code did not match; wait for the next one and try again.")
                continue
            }
            if attempt < 3 { context.console.message("The code did not match; wait for the next one and try again.") }
        }
        throw AuthctlError(.notAuthorized, "The code did not match")
    }
}

import CognitoClient
import Foundation
import LocalFormats

/// LocalFormats' readers of what sits on this machine or comes from the service through it: a
/// config.toml anyone may have edited, Secret Service items another program may have written, and
/// the text an authenticator hand-out draws. Besides "no crash", each checks that what it would
/// write reads back the same (a failed check is a crash, so libFuzzer keeps the input).
enum LocalFormatTargets {
    static let all: [String: @Sendable (Data) -> Void] = [
        "config-toml": configTOML,
        "stored-session": storedSession,
        "pending-challenge": pendingChallenge,
        "otpauth-qr": otpauthQR,
    ]

    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// config.toml's text; the profiles read are written and read again.
    static func configTOML(_ data: Data) {
        guard let text = String(data: data, encoding: .utf8),
            let profiles = try? ConfigDocument.parse(text)
        else { return }
        let again = try? ConfigDocument.parse(ConfigDocument.render(profiles))
        precondition(again == profiles, "config.toml written from what was read reads back differently")
    }

    /// A session item's JSON, then what the commands ask of a session, then the round trip.
    static func storedSession(_ data: Data) {
        guard var session = try? StoredSession.decoder.decode(StoredSession.self, from: data) else { return }
        _ = (session.label, session.expiresWithin(60, now: now), session.isSignedIn(as: "alice@example.com"))
        roundTrip(session)
        let refreshed = AuthenticationResult(
            accessToken: session.idToken, expiresIn: session.version,
            tokenType: nil, refreshToken: nil, idToken: nil)
        if (try? session.apply(refreshed: refreshed, now: now)) != nil { roundTrip(session) }
    }

    /// A pending-challenge item's JSON.
    static func pendingChallenge(_ data: Data) {
        guard let pending = try? StoredSession.decoder.decode(PendingChallenge.self, from: data) else { return }
        _ = (pending.isExpired(now: now), pending.isFor(username: "alice"), pending.displayName)
        roundTrip(pending)
    }

    /// `SECRET\nUSERNAME\nISSUER`: the secret and username come from the service, the issuer is
    /// the pool id; the otpauth URI made of them, its QR code and both drawings.
    static func otpauthQR(_ data: Data) {
        let fields = String(decoding: data, as: UTF8.self).split(
            separator: "\n", maxSplits: 2, omittingEmptySubsequences: false)
        let field = { (index: Int) in index < fields.count ? String(fields[index]) : "" }
        _ = AuthenticatorURI.label(username: field(1), attributes: ["email": field(2)])
        let uri = AuthenticatorURI.otpauth(secret: field(0), username: field(1), issuer: field(2))
        guard let code = try? TerminalQRCode(encoding: uri) else { return }
        precondition(code.modules.allSatisfy { $0.count == code.modules.count }, "a QR code that is not square")
        _ = (code.render(colors: true), code.render(colors: false))
    }

    /// Encoded and decoded again, a record is the same record: nothing is lost on the next write.
    static func roundTrip<Record: Codable & Equatable>(_ record: Record) {
        guard let json = try? StoredSession.encoder.encode(record) else { return }
        let again = try? StoredSession.decoder.decode(Record.self, from: json)
        precondition(again == record, "\(Record.self) written from what was read reads back differently")
    }
}

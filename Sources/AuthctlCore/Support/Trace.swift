import CognitoClient
import SecureStore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `--debug`'s format: lines for a person, or JSON Lines (`--debug=json`).
package enum TraceFormat: String, CaseIterable, Sendable {
    case text
    case json

    /// `AUTHCTL_DEBUG`: `1`, `true`, `yes`, `on`, `text` or `json` turn the trace on; empty, `0`,
    /// `false`, `no` or `off` leave it off; anything else throws, rather than being guessed (the
    /// context says so in a warning and runs without a trace: a trace never stops a command).
    package static let variable = "AUTHCTL_DEBUG"

    package static func fromEnvironment(_ environment: [String: String]) throws -> TraceFormat? {
        guard let value = environment[variable] else { return nil }
        switch value.lowercased() {
        case "", "0", "false", "no", "off": return nil
        case "1", "true", "yes", "on", "text": return .text
        case "json": return .json
        default:
            throw AuthctlError(
                .usage, "\(variable)=\(UntrustedText(value)) is not a trace format: use 1 (or text), json, or 0")
        }
    }
}

/// `--debug`: one line per event on stderr, with the time since the command started. Events are
/// `TraceEvent`s, typed values with only safe fields, so no secret can be handed to one by
/// mistake. Made only when the trace is on: every site is `context.trace?.record(...)`, whose
/// event is not even built when it is off.
package final class Trace: Sendable {
    private let console: Console
    private let format: TraceFormat
    private let started: Double

    package init(console: Console, format: TraceFormat) {
        self.console = console
        self.format = format
        started = Self.clock()
    }

    package func record(_ event: TraceEvent) {
        let offset = Self.clock() - started
        let fields = event.fields
        switch format {
        case .text:
            var line = "authctl: debug +\(Self.seconds(offset))s \(event.name)"
            for (key, value) in fields { line += " \(key)=\(value.text)" }
            console.message(line)
        case .json:
            var object = "{\"t\":\(Self.seconds(offset)),\"event\":\"\(event.name)\",\"fields\":{"
            object += fields.map { "\"\($0.key)\":\($0.value.json)" }.joined(separator: ",")
            object += "}}"
            console.message(TerminalText.jsonSafe(object))
        }
    }

    /// Seconds on the monotonic clock.
    package static func clock() -> Double { ObservedTransport.monotonic() }

    /// The observer CognitoClient tells of its requests and retries.
    package var serviceObserver: ServiceObserver {
        { [self] event in record(.service(event)) }
    }

    /// Seconds with three decimals (`0.012`): integer arithmetic, no locale.
    static func seconds(_ value: Double) -> String {
        let millis = Int((max(0, value) * 1000).rounded())
        let fraction = String(millis % 1000)
        return "\(millis / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
}

/// One value of an event's field. There is no case for a plain string: text from outside goes in
/// as `outside` (escaped when written), names from the service as CognitoClient's `SafeName`,
/// everything else as a number, a flag or an enum's fixed word.
package enum TraceValue: Sendable {
    case int(Int)
    case seconds(Double)
    case flag(Bool)
    /// A fixed word of authctl's own (an enum's raw value, a type's name).
    case word(StaticWord)
    case name(SafeName)
    /// A setting's value from the command line, the environment or config.toml (never a secret:
    /// those are traced as `set` only) or a challenge's name, escaped as any outside text.
    case outside(TracedText)

    var text: String {
        switch self {
        case .int(let value): return String(value)
        case .seconds(let value): return Trace.seconds(value) + "s"
        case .flag(let value): return value ? "yes" : "no"
        case .word(let word): return word.text.contains(" ") ? "\"" + word.text + "\"" : word.text
        case .name(let name): return name.text
        // Quoted, its own quotes escaped, so a value cannot pass for another field.
        case .outside(let text):
            return "\"" + UntrustedText(text.raw).description.replacing("\"", with: "\\\"") + "\""
        }
    }

    var json: String {
        switch self {
        case .int(let value): return String(value)
        case .seconds(let value): return Trace.seconds(value)
        case .flag(let value): return value ? "true" : "false"
        case .word(let word): return Self.quoted(word.text)
        case .name(let name): return Self.quoted(name.text)
        case .outside(let text): return Self.quoted(text.raw)
        }
    }

    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f:
                let hex = String(scalar.value, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

/// A word authctl wrote: an enum case's raw value, a literal or a type's name, never data. Only
/// a `CaseIterable` enum's raw value: a raw-representable struct (ChallengeName) can hold anything.
package struct StaticWord: Sendable {
    let text: String
    package init<Word: RawRepresentable & CaseIterable>(_ word: Word) where Word.RawValue == String {
        text = word.rawValue
    }
    /// The name of `value`'s type (a flow, an answerer).
    package init(typeOf value: Any) { text = String(describing: type(of: value)) }
    package init(_ literal: StaticString) { text = literal.description }
}

/// Outside text for the trace (a setting's value, a challenge's name), at most 200 characters
/// (longer is cut, with an ellipsis).
package struct TracedText: Sendable {
    let raw: String
    package init(outside value: String) {
        raw = value.count > 200 ? String(value.prefix(200)) + "…" : value
    }
}

/// Where a setting came from.
package enum SettingSource: String, CaseIterable, Sendable {
    case flag, environment, profile, derived, `default`
}

/// Why this store is used.
package enum StoreChoice: String, CaseIterable, Sendable {
    /// `--store`.
    case flag
    /// `AUTHCTL_STORE`.
    case environment
    /// The store recorded in the profile (config.toml's `store`).
    case profile
    case `default`
}

/// What a cache is of.
package enum CacheKind: String, CaseIterable, Sendable {
    /// The pool's signing keys (JWKS).
    case keySet = "key-set"
    case awsCredentials = "aws-credentials"
    case machineToken = "machine-token"
    case derivedToken = "derived-token"
}

/// A sign-in's way, as the flow that ran it.
package enum SignInBranch: String, CaseIterable, Sendable {
    case primary
    /// The primary did not answer: run again at the replica.
    case replica
}

/// Everything a trace can say. Each case's fields are typed (`TraceValue`); none takes a string
/// from a request or an answer, so a password, a token, a code or a session cannot be passed.
package enum TraceEvent: Sendable {
    /// `settings`: a setting, where it came from and (when not secret) its value.
    case setting(StaticString, SettingSource, TraceValue?)
    case store(StoreKind, StoreChoice)
    /// `store doctor`: whether a store can be used here.
    case storeCheck(StoreKind, usable: Bool)
    /// Where the file store's passphrase came from (`PassphraseOrigin.traceName`: never the
    /// passphrase, nor a file's path).
    case passphrase(from: StaticWord)
    /// The file store asked its key agent (kinds of request and answer only).
    case fileStore(FileStoreEvent)
    /// How the Secret Service store read an item: directly, or through libsecret and why.
    case secretService(SecretServiceEvent)
    case service(ServiceEvent)
    case cache(CacheKind, hit: Bool)
    /// A challenge of a sign-in and the answerer taking it.
    case challenge(TracedText, answerer: StaticWord)
    /// A sign-in starting: its flow and where.
    case signIn(flow: StaticWord, SignInBranch)
    /// The primary did not answer; `what` goes to the replica.
    case failover(StaticString, replicaRegion: TracedText)
    /// A profile lock taken (after `waited` seconds) or released.
    case lock(ProfileStore.Lock, taken: Bool, waited: Double)
    /// `exec --serve`: a request answered (what was asked, by route only, and the HTTP status).
    case served(StaticWord, status: Int)
    /// `exec --serve`: a background renewal of what it serves, and how long the result lasts.
    case serveRenewal(renewed: Bool, validFor: Double?)

    var name: String {
        switch self {
        case .setting: return "setting"
        case .store: return "store"
        case .storeCheck: return "store-check"
        case .passphrase: return "passphrase"
        case .fileStore: return "key-agent"
        case .secretService: return "secret-service-read"
        case .service(.exchange): return "request"
        case .service(.retry): return "retry"
        case .cache(_, let hit): return hit ? "cache-hit" : "cache-miss"
        case .challenge: return "challenge"
        case .signIn: return "signin"
        case .failover: return "failover"
        case .lock(_, let taken, _): return taken ? "lock-taken" : "lock-released"
        case .served: return "served"
        case .serveRenewal: return "serve-renewal"
        }
    }

    var fields: [(key: String, value: TraceValue)] {
        switch self {
        case .setting(let name, let source, let value):
            return [("name", .word(StaticWord(name))), ("source", .word(StaticWord(source)))]
                + (value.map { [("value", $0)] } ?? [])
        case .store(let kind, let choice):
            return [("store", .word(StaticWord(kind))), ("because", .word(StaticWord(choice)))]
        case .service(.exchange(let exchange)):
            var fields: [(key: String, value: TraceValue)] = [
                ("operation", .name(exchange.operation)), ("host", .name(exchange.host)),
            ]
            if let status = exchange.status { fields.append(("status", .int(status))) }
            if let code = exchange.errorCode { fields.append(("error", .name(code))) }
            if let failure = exchange.failure { fields.append(("failure", .word(StaticWord(failure.traceName)))) }
            if let id = exchange.requestId { fields.append(("request_id", .name(id))) }
            fields.append(("duration", .seconds(exchange.seconds)))
            return fields
        case .service(.retry(let decision)):
            var fields: [(key: String, value: TraceValue)] = [
                ("operation", .name(decision.operation)), ("attempt", .int(decision.attempt)),
                ("cause", .word(StaticWord(decision.cause))), ("decision", .word(StaticWord(decision.verdict))),
            ]
            if let wait = decision.wait { fields.append(("wait", .seconds(wait))) }
            return fields
        case .storeCheck(let kind, let usable):
            return [("store", .word(StaticWord(kind))), ("usable", .flag(usable))]
        case .passphrase(let origin):
            return [("from", .word(origin))]
        case .fileStore(.agent(let request, let answer)):
            return [
                ("request", .word(StaticWord(request.traceName))),
                ("answer", .word(StaticWord(answer?.traceName ?? "none"))),
            ]
        case .secretService(.read(let direct, let detour)):
            return [("via", .word(StaticWord(direct ? "direct" : "libsecret")))]
                + (detour.map { [("because", .word(StaticWord($0.traceName)))] } ?? [])
        case .cache(let kind, _):
            return [("cache", .word(StaticWord(kind)))]
        case .challenge(let challenge, let answerer):
            return [("challenge", .outside(challenge)), ("answerer", .word(answerer))]
        case .signIn(let flow, let branch):
            return [("flow", .word(flow)), ("at", .word(StaticWord(branch)))]
        case .failover(let what, let region):
            return [("what", .word(StaticWord(what))), ("replica_region", .outside(region))]
        case .lock(let lock, let taken, let waited):
            return [("lock", .word(StaticWord(lock.traceName)))] + (taken ? [("waited", .seconds(waited))] : [])
        case .served(let route, let status):
            return [("route", .word(route)), ("status", .int(status))]
        case .serveRenewal(let renewed, let validFor):
            return [("renewed", .flag(renewed))] + (validFor.map { [("valid_for", .seconds($0))] } ?? [])
        }
    }
}

extension ProfileStore.Lock {
    var traceName: StaticString {
        switch self {
        case .session: return "session"
        case .awsCredentials: return "aws-credentials"
        case .machineTokens: return "machine-token"
        }
    }
}

extension PassphraseOrigin {
    package var traceName: StaticString {
        switch self {
        case .fileDescriptor: return "passphrase-fd"
        case .file: return "AUTHCTL_STORE_PASSPHRASE_FILE"
        case .credential: return "systemd-credential"
        case .environment: return "AUTHCTL_STORE_PASSPHRASE"
        case .prompt: return "terminal"
        case .given: return "given"
        }
    }
}

extension AgentMessage.Kind {
    var traceName: StaticString {
        switch self {
        case .open: return "open"
        case .seal: return "seal"
        case .add: return "add"
        case .lock: return "lock"
        case .status: return "status"
        case .ok: return "ok"
        case .notHeld: return "not-held"
        case .refused: return "refused"
        }
    }
}

extension TransportError.Kind {
    /// In the words of `RetryDecision.Cause`.
    var traceName: StaticString {
        switch self {
        case .notConnected: return "not-connected"
        case .connection: return "connection"
        case .timeout: return "timeout"
        case .tls: return "tls"
        case .responseTooLarge: return "response-too-large"
        case .other: return "other"
        }
    }
}

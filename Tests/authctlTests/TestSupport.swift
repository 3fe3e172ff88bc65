import CognitoClient
import Foundation
import LocalFormats
import SecureStore
import Synchronization

@testable import AuthctlCore
@testable import authctl

/// A console fed from strings, recording what the command printed. Its state is behind a lock:
/// a command may print from a worker thread (the bulk runs' progress).
final class FakeConsole: Console {
    private struct State {
        var inputIsTerminal: Bool
        var canPrompt: Bool?
        var stdinLines: [String]
        var promptAnswers: [String]
        var stdout: [String] = []
        var stderr: [String] = []
        var prompts: [(question: String, secret: Bool)] = []
    }
    private let state: Mutex<State>

    /// `canPrompt` nil: a person can be asked exactly where standard input is a terminal.
    init(interactive: Bool = false, canPrompt: Bool? = nil, stdin: [String] = [], promptAnswers: [String] = []) {
        state = Mutex(
            State(inputIsTerminal: interactive, canPrompt: canPrompt, stdinLines: stdin, promptAnswers: promptAnswers))
    }

    var inputIsTerminal: Bool {
        get { state.withLock { $0.inputIsTerminal } }
        set { state.withLock { $0.inputIsTerminal = newValue } }
    }
    var canPrompt: Bool { state.withLock { $0.canPrompt ?? $0.inputIsTerminal } }
    var stdinLines: [String] {
        get { state.withLock { $0.stdinLines } }
        set { state.withLock { $0.stdinLines = newValue } }
    }
    var promptAnswers: [String] {
        get { state.withLock { $0.promptAnswers } }
        set { state.withLock { $0.promptAnswers = newValue } }
    }
    var stdout: [String] { state.withLock { $0.stdout } }
    var stderr: [String] { state.withLock { $0.stderr } }
    var prompts: [(question: String, secret: Bool)] { state.withLock { $0.prompts } }

    func output(_ text: String) { state.withLock { $0.stdout.append(text) } }
    func message(_ text: String) { state.withLock { $0.stderr.append(text) } }

    func readLine() -> String? {
        state.withLock { $0.stdinLines.isEmpty ? nil : $0.stdinLines.removeFirst() }
    }

    func prompt(_ question: String, secret: Bool) -> String? {
        state.withLock {
            $0.prompts.append((question, secret))
            guard $0.canPrompt ?? $0.inputIsTerminal, !$0.promptAnswers.isEmpty else { return nil }
            return $0.promptAnswers.removeFirst()
        }
    }
}

/// Answers Cognito operations from handlers keyed by operation name, recording each call.
final class FakeCognito: HTTPTransport {
    typealias Handler = ([String: Any]) -> (status: Int, body: [String: Any])
    var handlers: [String: Handler] = [:]
    private(set) var calls: [(operation: String, body: [String: Any])] = []

    func send(_ request: HTTPRequest) throws -> HTTPResponse {
        let target = request.headers.first { $0.name == "X-Amz-Target" }?.value ?? ""
        let operation = String(target.split(separator: ".").last ?? "")
        let body = (try? JSONSerialization.jsonObject(with: request.body)) as? [String: Any] ?? [:]
        calls.append((operation, body))
        guard let handler = handlers[operation] else {
            return HTTPResponse(status: 400, body: Data(#"{"__type":"UnknownOperationException"}"#.utf8))
        }
        let (status, object) = handler(body)
        return HTTPResponse(
            status: status, headers: ["content-type": "application/x-amz-json-1.1"],
            body: (try? JSONSerialization.data(withJSONObject: object)) ?? Data())
    }

    func count(_ operation: String) -> Int { calls.filter { $0.operation == operation }.count }

    static func tokens(
        username: String = "alice", sub: String = "sub-1", expiresIn: Int = 3600, refresh: String? = "refresh-1",
        now: Date = Date()
    ) -> [String: Any] {
        var result: [String: Any] = [
            "AccessToken": jwt([
                "username": username, "sub": sub, "exp": now.timeIntervalSince1970 + Double(expiresIn),
                "token_use": "access",
                "cognito:groups": ["devs"], "iss": issuer, "client_id": "client1",
            ]),
            "IdToken": jwt([
                "cognito:username": username, "sub": sub, "token_use": "id", "iss": issuer, "aud": "client1",
                "exp": now.timeIntervalSince1970 + Double(expiresIn),
            ]),
            "ExpiresIn": expiresIn, "TokenType": "Bearer",
        ]
        result["RefreshToken"] = refresh
        return ["AuthenticationResult": result]
    }

    static let issuer = "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_TestPool"

    static func jwt(_ claims: [String: Any]) -> String {
        func encode(_ object: [String: Any]) -> String {
            ((try? JSONSerialization.data(withJSONObject: object)) ?? Data()).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return "\(encode(["alg": "RS256"])).\(encode(claims)).c2ln"
    }

    static func error(_ type: String, _ message: String) -> (status: Int, body: [String: Any]) {
        (400, ["__type": type, "message": message])
    }
}

/// A store that is always unreachable, like a machine without a session bus.
final class UnavailableStore: SecretStore {
    static let failure = SecureStoreError(kind: .unavailable, message: "no D-Bus session bus")
    func read(_ key: SecretKey) throws -> String? { throw Self.failure }
    func write(_ key: SecretKey, label: String, secret: String) throws { throw Self.failure }
    func delete(_ key: SecretKey) throws -> Bool { throw Self.failure }
}

/// An in-memory store whose writes fail (a keyring that locked, or stopped answering, mid-command).
final class WriteFailingStore: SecretStore {
    let inner = InMemorySecretStore()
    var failWrites = false
    static let failure = SecureStoreError(kind: .timeout, message: "the Secret Service did not answer within 5 s")
    func read(_ key: SecretKey) throws -> String? { try inner.read(key) }
    func write(_ key: SecretKey, label: String, secret: String) throws {
        if failWrites { throw Self.failure }
        try inner.write(key, label: label, secret: secret)
    }
    func delete(_ key: SecretKey) throws -> Bool { try inner.delete(key) }
}

struct Harness {
    /// Stores a signed-in session for alice whose access token expires `expiresIn` seconds after `now`
    /// (and its id token too, unless `idToken` is given).
    func seedSession(expiresIn: Int, now: Date, idToken: String? = nil) throws {
        let tokens = FakeCognito.tokens(expiresIn: expiresIn, now: now)["AuthenticationResult"] as! [String: Any]
        let result = AuthenticationResult(
            accessToken: tokens["AccessToken"] as! String, expiresIn: expiresIn,
            tokenType: "Bearer", refreshToken: "refresh-1", idToken: idToken ?? tokens["IdToken"] as? String)
        let client = try ClientSettings(
            try SettingsResolver.resolve(try GlobalOptions.parse([]).settingsInput, environment: host.environment))
        try save(
            in: store,
            try StoredSession(tokens: result, fallbackUsername: "alice", profile: "default", client: client, now: now))
    }

    let console: FakeConsole
    let cognito = FakeCognito()
    let store: SecretStore
    let host: ProcessHost
    let home: String

    init(
        console: FakeConsole = FakeConsole(), store: SecretStore = InMemorySecretStore(),
        environment: [String: String] = [:], now: Date = Date()
    ) {
        self.console = console
        self.store = store
        let home = NSTemporaryDirectory() + "authctl-tests-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        self.home = home
        var env = [
            "HOME": home, "AUTHCTL_USER_POOL_ID": "eu-west-1_TestPool", "AUTHCTL_CLIENT_ID": "client1",
            "AUTHCTL_ENDPOINT": "http://127.0.0.1:9/",
        ]
        env.merge(environment) { $1 }
        let cognito = self.cognito
        self.host = ProcessHost(
            console: console, environment: env, now: { now },
            makeTransport: { _ in cognito }, makeStore: { store })
    }
}

/// Everything kept for `profile` in `store`, as the commands see it (locks in a private directory).
func profileStore(_ store: SecretStore, profile: String = "default") -> ProfileStore {
    ProfileStore(source: StoreBackend { store }, environment: ["XDG_RUNTIME_DIR": testLockDirectory], profile: profile)
}

/// Stores `session` the one way there is: through the session lock.
func save(in store: SecretStore, _ session: StoredSession) throws {
    try profileStore(store, profile: session.profile).withLockedSession { try $0.save(session) }
}

let testLockDirectory: String = {
    let path = NSTemporaryDirectory() + "authctl-test-locks-\(getpid())"
    try? FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    return path
}()

extension SettingsResolver {
    /// The settings the global options given in `arguments` resolve to (the commands get theirs
    /// from `CommandContext.settings`).
    static func resolve(_ options: GlobalOptions, environment: [String: String]) throws -> Settings {
        try resolve(options.settingsInput, environment: environment)
    }
}

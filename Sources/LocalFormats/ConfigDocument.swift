import TOMLKit

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One `[profiles.NAME]` table of config.toml.
public struct ProfileConfig: Equatable, Sendable {
    public var userPoolId: String?
    public var clientId: String?
    public var region: String?
    public var endpoint: String?
    public var username: String?
    public var identityPoolId: String?
    public var domain: String?
    public var redirectPort: String?
    /// Where the profile's items are kept (`secret-service`, `kernel-keyring`, `file`): recorded
    /// the first time the profile keeps something (pinned), changed by `configure --store` and
    /// `store migrate`.
    public var store: String?
    /// The store `store migrate` is moving the profile's items out of, until their old copies
    /// are deleted (a migration interrupted after its pin is finished by running it again).
    public var storeMigratingFrom: String?
    /// The store `store migrate` is copying the profile's items into, until the copy is recorded:
    /// set, a copy there may be partial (an interrupted migration), removed by migrating back.
    public var storeMigratingTo: String?
    /// The identity pool's name for the user pool (the Logins key), when not the original one.
    public var identityProviderName: String?
    /// The replica pool's region for failover.
    public var failoverRegion: String?
    /// The relying party the profile's passkeys are for: the only rpId a security key is asked to
    /// sign for (named once with `passkey add --rp-id` and recorded, or set by hand).
    public var passkeyRpId: String?
    /// `true` (a TOML boolean, or the same as a string) once `mfa enable passkey` turned passkey
    /// MFA on for the profile's user: a passkey sign-in then always asks the key for user
    /// verification, whatever the service's options say.
    public var passkeyMFA: String?
    /// `api`: `token --client-credentials` asks the user-pool API (GetClientToken) even where a
    /// managed-login domain is configured; `managed-login` (the default with a domain): its token
    /// endpoint.
    public var machineTokens: String?
    /// `true` or `false` (a TOML boolean, or the same as a string): whether a passphrase typed at
    /// a prompt for this profile's file store also unlocks the key agent (default true).
    public var unlockAfterPrompt: String?
    /// The pinentry program secrets are asked through (a path or a name on PATH; `none`: never).
    public var pinentry: String?
    /// `true` or `false`: kube-token may ask through pinentry where kubectl says it is not
    /// interactive (default false).
    public var pinentryNoninteractive: String?

    public init(
        userPoolId: String? = nil, clientId: String? = nil, region: String? = nil, endpoint: String? = nil,
        username: String? = nil, identityPoolId: String? = nil, domain: String? = nil, redirectPort: String? = nil,
        identityProviderName: String? = nil
    ) {
        self.userPoolId = userPoolId
        self.clientId = clientId
        self.region = region
        self.endpoint = endpoint
        self.username = username
        self.identityPoolId = identityPoolId
        self.domain = domain
        self.redirectPort = redirectPort
        self.identityProviderName = identityProviderName
    }

    public static let keys: [(toml: String, path: WritableKeyPath<ProfileConfig, String?> & Sendable)] = [
        ("user_pool_id", \.userPoolId),
        ("client_id", \.clientId),
        ("region", \.region),
        ("endpoint", \.endpoint),
        ("username", \.username),
        ("identity_pool_id", \.identityPoolId),
        ("domain", \.domain),
        ("redirect_port", \.redirectPort),
        ("store", \.store),
        ("store_migrating_from", \.storeMigratingFrom),
        ("store_migrating_to", \.storeMigratingTo),
        ("identity_provider_name", \.identityProviderName),
        ("failover_region", \.failoverRegion),
        ("passkey_rp_id", \.passkeyRpId),
        ("passkey_mfa", \.passkeyMFA),
        ("machine_tokens", \.machineTokens),
        ("unlock_after_prompt", \.unlockAfterPrompt),
        ("pinentry", \.pinentry),
        ("pinentry_noninteractive", \.pinentryNoninteractive),
    ]

    /// Keys whose value may be a TOML boolean, read as "true" or "false" and written back as one.
    public static let booleanKeys: Set<String> = ["unlock_after_prompt", "passkey_mfa", "pinentry_noninteractive"]
}

/// Why a config.toml text is not a configuration.
public enum ConfigDocumentError: Error, Equatable {
    /// Not TOML at all: the parser's words and the line.
    case notTOML(description: String, line: Int)
    /// `profiles.NAME` is a value, not a table.
    case profileNotATable(profile: String)
    /// A known key holds something other than a string (`redirect_port` may be an integer).
    case notAString(profile: String, key: String)
}

/// The text of config.toml: profiles only, never secrets. Reading the file (size cap, regular
/// file) is the caller's.
public enum ConfigDocument {
    /// The profiles of a config.toml text; unknown keys and tables are ignored.
    public static func parse(_ text: String) throws -> [String: ProfileConfig] {
        // The caller's file cap is 1 MiB; a text handed over some other way is held to the same.
        guard text.utf8.count <= TableHeaders.maxBytes else {
            throw ConfigDocumentError.notTOML(description: "longer than 1 MiB", line: 1)
        }
        try TableHeaders.check(text)
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw ConfigDocumentError.notTOML(description: error.description, line: error.source.begin.line)
        }
        var profiles: [String: ProfileConfig] = [:]
        guard let profilesTable = table["profiles"]?.table else { return profiles }
        for name in profilesTable.keys {
            guard let entry = profilesTable[name]?.table else {
                throw ConfigDocumentError.profileNotATable(profile: name)
            }
            var profile = ProfileConfig()
            for (key, field) in ProfileConfig.keys {
                if let value = entry[key] {
                    guard
                        let string = value.string ?? (key == "redirect_port" ? value.int.map(String.init) : nil)
                            ?? (ProfileConfig.booleanKeys.contains(key) ? value.bool.map(String.init) : nil)
                    else {
                        throw ConfigDocumentError.notAString(profile: name, key: key)
                    }
                    profile[keyPath: field] = string
                }
            }
            profiles[name] = profile
        }
        return profiles
    }

    /// The text `parse` reads back as `profiles`, with a header line saying where it came from.
    /// Written by hand, not by TOMLKit: its writer put a value holding `'''` and a line break in
    /// a multi-line literal string that this quote ended, so `configure` could write a file no
    /// command could read (found by the `config-toml` fuzz target's round trip,
    /// `Fuzz/corpus/config-toml/regression-literal-string-quotes`). Every value is a basic string
    /// with TOML's escapes; names are bare keys when they can be, else quoted the same way.
    public static func render(_ profiles: [String: ProfileConfig]) -> String {
        var text = "# authctl profiles: written by `authctl configure`. Secrets are never kept here.\n"
        for name in profiles.keys.sorted() {
            text += "\n[profiles.\(key(name))]\n"
            for (key, field) in ProfileConfig.keys.sorted(by: { $0.toml < $1.toml }) {
                guard let value = profiles[name]?[keyPath: field] else { continue }
                let bare = ProfileConfig.booleanKeys.contains(key) && (value == "true" || value == "false")
                text += "\(key) = \(bare ? value : basicString(value))\n"
            }
        }
        return text
    }

    private static func key(_ name: String) -> String {
        let bare =
            !name.isEmpty
            && name.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
                    || $0 == "-"
            }
        return bare ? name : basicString(name)
    }

    /// `"..."` with `\\`, `\"` and every control character escaped (TOML 1.0 basic string).
    private static func basicString(_ value: String) -> String {
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// The TOML parser TOMLKit 0.6.0 bundles (toml++) asserts, instead of reporting an error, on a
/// table header whose name does not start with a key (`[#a]`, `[.a]`, `[ü]`, a control
/// character) and on an array closed by `}` (`x = [}`): a debug build aborts, a release build has
/// undefined behaviour (found by the `config-toml` fuzz target,
/// `Fuzz/corpus/config-toml/regression-*`). Both are refused here first, as the parser should
/// have: a header is `[` or `[[` at the start of a line outside any string or value, then optional
/// blanks, then a bare key character or a quote; in a value, every `]` and `}` closes the last
/// `[` or `{` still open. toml++ also recurses once per level of a dotted key (`[a.b.c…]`,
/// `a.b.c… = 1`) and of nested arrays and inline tables, so a 300 KB header of dots overflowed the
/// stack: keys deeper than `maxKeyDepth` and values nested deeper than `maxNesting` are refused here.
enum TableHeaders {
    static let maxBytes = 1024 * 1024
    /// Far beyond any profile's `profiles.NAME.key`, far below what the parser's stack holds.
    static let maxKeyDepth = 32
    static let maxNesting = 32

    static func check(_ text: String) throws {
        var scanner = Scanner(Array(text.utf8))
        try scanner.run()
    }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0
        var line = 1
        init(_ bytes: [UInt8]) { self.bytes = bytes }

        func at(_ offset: Int) -> UInt8? {
            index + offset < bytes.count ? bytes[index + offset] : nil
        }

        mutating func run() throws {
            while index < bytes.count {
                try lineStart()
                try scanRestOfLine()
            }
        }

        /// At the start of a line at the top level: a header is checked and skipped.
        mutating func lineStart() throws {
            while let byte = at(0), byte == 0x20 || byte == 0x09 { index += 1 }
            guard at(0) == UInt8(ascii: "[") else { return }
            index += at(1) == UInt8(ascii: "[") ? 2 : 1
            while let byte = at(0), byte == 0x20 || byte == 0x09 { index += 1 }
            guard let first = at(0), isBareKey(first) || first == UInt8(ascii: "\"") || first == UInt8(ascii: "'")
            else {
                throw ConfigDocumentError.notTOML(
                    description: "a table name must start with a letter, a digit, '_', '-' or a quote",
                    line: line)
            }
        }

        /// Skips to the start of the next top-level line, through strings, comments and any
        /// array or inline table a value opens (which may span lines).
        mutating func scanRestOfLine() throws {
            var open: [UInt8] = []
            // In a key (a header's name, before `=`, after `{` or an inline table's `,`), each dot is a level.
            var inKey = true
            var keyDepth = 0
            while let byte = at(0) {
                switch byte {
                case 0x0A:
                    index += 1
                    line += 1
                    if open.isEmpty { return }
                case UInt8(ascii: "."):
                    if inKey {
                        keyDepth += 1
                        guard keyDepth < TableHeaders.maxKeyDepth else {
                            throw ConfigDocumentError.notTOML(
                                description: "a key of more than \(TableHeaders.maxKeyDepth) dotted parts", line: line)
                        }
                    }
                    index += 1
                case UInt8(ascii: "="):
                    inKey = false
                    index += 1
                case UInt8(ascii: ","):
                    inKey = open.last == UInt8(ascii: "{")
                    keyDepth = 0
                    index += 1
                case UInt8(ascii: "#"):
                    while let next = at(0), next != 0x0A { index += 1 }
                case UInt8(ascii: "\""), UInt8(ascii: "'"):
                    skipString(quote: byte)
                case UInt8(ascii: "["), UInt8(ascii: "{"):
                    guard open.count < TableHeaders.maxNesting else {
                        throw ConfigDocumentError.notTOML(
                            description: "values nested more than \(TableHeaders.maxNesting) deep", line: line)
                    }
                    open.append(byte)
                    inKey = byte == UInt8(ascii: "{")
                    keyDepth = 0
                    index += 1
                case UInt8(ascii: "]"), UInt8(ascii: "}"):
                    // A header's own `]` (the line began with `[`) closes nothing that is open.
                    if let last = open.last {
                        guard (last == UInt8(ascii: "[")) == (byte == UInt8(ascii: "]")) else {
                            throw ConfigDocumentError.notTOML(
                                description:
                                    "'\(Character(Unicode.Scalar(byte)))' does not close the '\(Character(Unicode.Scalar(last)))' before it",
                                line: line)
                        }
                        open.removeLast()
                    } else {
                        inKey = false  // the end of a header's name
                    }
                    index += 1
                default:
                    index += 1
                }
            }
        }

        /// A basic or literal string, single- or multi-line, from its opening quote.
        mutating func skipString(quote: UInt8) {
            let multiline = at(1) == quote && at(2) == quote
            index += multiline ? 3 : 1
            while let byte = at(0) {
                if byte == UInt8(ascii: "\\") && quote == UInt8(ascii: "\"") {
                    if at(1) == 0x0A { line += 1 }
                    index += 2
                    continue
                }
                if byte == 0x0A {
                    line += 1
                    if !multiline {
                        index += 1
                        return
                    }  // unterminated: the parser reports it
                }
                if byte == quote && (!multiline || (at(1) == quote && at(2) == quote)) {
                    index += multiline ? 3 : 1
                    // A multi-line string may end with up to two more quotes of its own.
                    while multiline, at(0) == quote { index += 1 }
                    return
                }
                index += 1
            }
        }

        func isBareKey(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }
}

/// Text on its way to a terminal. authctl prints text it did not write itself (the service's error
/// messages and types, claims, user attributes, where a code was sent): a control character in it
/// could move the cursor, clear the screen, retitle the window or forge lines, so every control
/// character is shown escaped (`\x1b`) instead. The terminal console applies this to everything it
/// writes, keeping only the newlines authctl's own text has; `UntrustedText` also escapes those.
package enum TerminalText {
    /// C0 controls and DEL as `\xHH`, C1 controls and the bidirectional and line-separator
    /// characters as `\uHHHH`; `keepingNewlines` leaves `\n` as it is (authctl's own line breaks).
    package static func escaped(_ text: String, keepingNewlines: Bool) -> String {
        if text.utf8.allSatisfy({ (0x20..<0x7f).contains($0) || (keepingNewlines && $0 == 0x0a) }) { return text }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if keepingNewlines && scalar == "\n" {
                result.append(scalar)
            } else if let escape = escape(scalar) {
                result.append(contentsOf: escape.unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// A JSON document for stdout: JSONEncoder already writes C0 controls as `\u00XX`, but not C1
    /// controls (U+0080–U+009F: U+009B is a CSI to some terminals) nor bidirectional overrides.
    /// They can only occur inside strings (JSON's structure is ASCII), where `\uHHHH` is the same text.
    package static func jsonSafe(_ json: String) -> String {
        if json.utf8.allSatisfy({ $0 < 0x80 }) { return json }
        var result = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            if scalar.value >= 0x80, escape(scalar) != nil {
                result.append(contentsOf: hex(scalar.value, prefix: "\\u", digits: 4).unicodeScalars)
            } else {
                result.append(scalar)
            }
        }
        return String(result)
    }

    private static func escape(_ scalar: Unicode.Scalar) -> String? {
        switch scalar.value {
        case 0x00..<0x20, 0x7f: return hex(scalar.value, prefix: "\\x", digits: 2)
        case 0x80..<0xa0, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a...0x202e, 0x2066...0x2069:
            return hex(scalar.value, prefix: "\\u", digits: 4)
        default: return nil
        }
    }

    private static func hex(_ value: UInt32, prefix: String, digits: Int) -> String {
        let text = String(value, radix: 16)
        return prefix + String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}

/// Text from outside (the service, a token's claims, a user's attributes), for interpolation into
/// a message or a text report: every control character escaped, newlines too, so it can neither
/// drive the terminal nor pass for a line authctl wrote. JSON output carries the raw value instead
/// (JSON escapes it).
package struct UntrustedText: CustomStringConvertible {
    package let raw: String

    package init(_ raw: String) {
        self.raw = raw
    }

    package var description: String { TerminalText.escaped(raw, keepingNewlines: false) }
}

import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Words as they must be typed in a shell.
package enum ShellWord {
    /// For the commands messages suggest: plain words as they are; anything else single-quoted,
    /// with text from outside escaped first (it is shown on a terminal).
    package static func quoted(_ word: String) -> String {
        let plain = word.unicodeScalars.allSatisfy {
            PercentEncoding.isASCIIAlphanumeric($0) || "@._+-".unicodeScalars.contains($0)
        }
        if plain && !word.isEmpty { return word }
        return "'" + UntrustedText(word).description.replacing("'", with: "'\\''") + "'"
    }

    /// For `export` lines a shell evaluates: the value exactly, single-quoted.
    package static func exactlyQuoted(_ value: String) -> String {
        "'" + value.replacing("'", with: "'\\''") + "'"
    }
}

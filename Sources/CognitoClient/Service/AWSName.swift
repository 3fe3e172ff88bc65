/// The shape of AWS names checked before any request, by hand rather than with
/// `range(of:options: .regularExpression)`: that builds an NSRegularExpression through ICU, about
/// 10 million instructions at every start of `authctl token` (docs/performance.md).
public enum AWSName {
    /// A region's shape, `^[a-z]{2}(-[a-z]+)+-[0-9]+$`: `eu-west-1`, `us-gov-west-1`.
    public static func isRegion<S: StringProtocol>(_ name: S) -> Bool {
        let parts = name.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].utf8.count == 2, let last = parts.last else { return false }
        let lowercase = { (part: S.SubSequence) in !part.isEmpty && part.utf8.allSatisfy { (0x61...0x7A).contains($0) }
        }
        return parts.dropLast().allSatisfy(lowercase) && !last.isEmpty
            && last.utf8.allSatisfy { (0x30...0x39).contains($0) }
    }

    /// `<region>_<id>`, `^[a-z]{2}(-[a-z]+)+-[0-9]+_[0-9A-Za-z]+$`: `eu-west-1_AbC123`.
    public static func isUserPoolId(_ id: String) -> Bool {
        let parts = id.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count == 2, isRegion(parts[0]), !parts[1].isEmpty else { return false }
        return parts[1].utf8.allSatisfy { isASCIIDigit($0) || isASCIILetter($0) }
    }

    /// `<region>:<id>`, `^[a-z]{2}(-[a-z]+)+-[0-9]+:[0-9a-f-]+$`.
    public static func isIdentityPoolIdShape(_ id: String) -> Bool {
        let parts = id.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, isRegion(parts[0]), !parts[1].isEmpty else { return false }
        return parts[1].utf8.allSatisfy { isASCIIDigit($0) || (0x61...0x66).contains($0) || $0 == UInt8(ascii: "-") }
    }

    /// An app client id, botocore's `[\w+]+`: letters, digits, `_` and `+`.
    public static func isClientId(_ id: String) -> Bool {
        !id.isEmpty && id.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "+" }
    }

    private static func isASCIIDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    private static func isASCIILetter(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}

/// Percent-encoding as Foundation's `addingPercentEncoding(withAllowedCharacters:)` does it,
/// which FoundationEssentials lacks (no `CharacterSet` either): the allowed set is a predicate on
/// Unicode scalars. (Foundation 6 keeps only ASCII characters of the set: `CharacterSet.alphanumerics`
/// let no `é` through either.) Public: the executable and LocalFormats use FoundationEssentials only too.
public enum PercentEncoding {
    /// Each Unicode scalar of `text` for which `keep` is true as it is; each other one as its
    /// UTF-8 bytes, each `%XX` with upper-case hexadecimal digits.
    public static func encode(_ text: String, keeping keep: (Unicode.Scalar) -> Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if keep(scalar) {
                out.append(contentsOf: UTF8.encode(scalar)!)
                continue
            }
            for byte in UTF8.encode(scalar)! {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0f)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// RFC 3986's unreserved characters: ASCII letters and digits, `-`, `.`, `_` and `~`.
    public static func isUnreserved(_ scalar: Unicode.Scalar) -> Bool {
        isASCIIAlphanumeric(scalar) || scalar == "-" || scalar == "." || scalar == "_" || scalar == "~"
    }

    public static func isASCIIAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "A"..."Z", "a"..."z", "0"..."9": return true
        default: return false
        }
    }
}

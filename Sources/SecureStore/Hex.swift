/// Lower-case hexadecimal, for the few places SecureStore writes or reads it (a socket path
/// shown escaped, the D-Bus EXTERNAL authentication, a bus address's `%XX`, a constant).
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }, as: UTF8.self)
    }

    /// The value of one hexadecimal digit, either case.
    static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The bytes of an even-length string of digits; nil for anything else.
    static func decode(_ text: String) -> [UInt8]? {
        let values = text.utf8.map(value(of:))
        guard values.count % 2 == 0, !values.contains(nil) else { return nil }
        return stride(from: 0, to: values.count, by: 2).map { values[$0]! << 4 | values[$0 + 1]! }
    }
}

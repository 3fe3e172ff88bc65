import COpenSSL

/// One OpenSSL `BIGNUM`, owned by this object and cleared and freed in `deinit`.
///
/// A `BigNum` is never changed after the factory that made it returns: every operation
/// writes into a fresh `BIGNUM`. That is what makes sharing one between threads safe
/// (OpenSSL only reads its inputs), hence `@unchecked Sendable`.
final class BigNum: @unchecked Sendable {
    /// The `BIGNUM *`. Only read it; never pass it as an output parameter.
    let pointer: OpaquePointer

    private init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit {
        // Clear as well as free: several values here (a, x, S) are secrets.
        authctl_bn_clear_free(pointer)
    }

    /// Allocates a `BIGNUM`, lets `fill` compute into it (OpenSSL style: 1 on success), wraps it.
    private static func make(constantTime: Bool = false, _ fill: (OpaquePointer) -> Bool) throws -> BigNum {
        try LibCrypto.require()
        guard let bn = constantTime ? authctl_bn_new_secret() : authctl_bn_new() else {
            throw SRPError.arithmeticFailure
        }
        guard fill(bn) else {
            authctl_bn_clear_free(bn)
            throw SRPError.arithmeticFailure
        }
        return BigNum(taking: bn)
    }

    // MARK: Construction

    /// The unsigned big-endian number in `bytes` (empty means zero).
    /// `constantTime` marks a secret value (BN_FLG_CONSTTIME) for OpenSSL.
    static func fromBytes(_ bytes: [UInt8], constantTime: Bool = false) throws -> BigNum {
        try make(constantTime: constantTime) { bn in
            bytes.withUnsafeBufferPointer { buffer in
                authctl_bn_bin2bn(buffer.baseAddress, Int32(buffer.count), bn) != nil
            }
        }
    }

    static func fromWord(_ word: UInt) throws -> BigNum {
        try make { bn in authctl_bn_set_word(bn, word) == 1 }
    }

    /// Parses an unsigned hexadecimal number (either case, any length, odd allowed).
    /// Anything else (empty, sign, `0x`, spaces) throws `SRPError.invalidHex(name)`.
    static func fromHex(_ hex: String, name: String) throws -> BigNum {
        guard let bytes = Hex.decode(hex) else { throw SRPError.invalidHex(name) }
        return try fromBytes(bytes)
    }

    // MARK: Reading

    var isZero: Bool { authctl_bn_is_zero(pointer) == 1 }

    var bitCount: Int { Int(authctl_bn_num_bits(pointer)) }

    /// Minimal unsigned big-endian bytes; empty for zero.
    var bytes: [UInt8] {
        let count = (bitCount + 7) / 8
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBufferPointer { buffer in
            _ = authctl_bn_bn2bin(pointer, buffer.baseAddress!)
        }
        return out
    }

    /// Cognito's `padHex` as bytes: the shortest even-length hex string, prefixed with `00`
    /// when its first digit is 8 or more (so it would read as non-negative two's complement).
    /// Zero is `[0x00]`.
    var paddedBytes: [UInt8] {
        let minimal = bytes
        guard let first = minimal.first else { return [0] }
        return first >= 0x80 ? [0] + minimal : minimal
    }

    /// Lowercase hexadecimal without leading zeros (`"0"` for zero), like JavaScript's
    /// `toString(16)`: what Cognito's own clients send as SRP_A.
    var hex: String {
        let encoded = Hex.encode(bytes)
        guard let firstNonZero = encoded.firstIndex(where: { $0 != "0" }) else { return "0" }
        return String(encoded[firstNonZero...])
    }

    // MARK: Arithmetic (each returns a new value)

    /// `self mod m`, in [0, m).
    func mod(_ m: BigNum, _ ctx: BNContext) throws -> BigNum {
        try Self.make { r in authctl_bn_nnmod(r, pointer, m.pointer, ctx.pointer) == 1 }
    }

    func adding(_ other: BigNum) throws -> BigNum {
        try Self.make(constantTime: true) { r in authctl_bn_add(r, pointer, other.pointer) == 1 }
    }

    func multiplied(by other: BigNum, _ ctx: BNContext) throws -> BigNum {
        try Self.make(constantTime: true) { r in authctl_bn_mul(r, pointer, other.pointer, ctx.pointer) == 1 }
    }

    /// `(self * other) mod m`, in [0, m).
    func modMultiplied(by other: BigNum, modulus m: BigNum, _ ctx: BNContext) throws -> BigNum {
        try Self.make { r in authctl_bn_mod_mul(r, pointer, other.pointer, m.pointer, ctx.pointer) == 1 }
    }

    /// `(self - other) mod m`, in [0, m) even when `other > self`.
    func modSubtracting(_ other: BigNum, modulus m: BigNum, _ ctx: BNContext) throws -> BigNum {
        try Self.make { r in authctl_bn_mod_sub(r, pointer, other.pointer, m.pointer, ctx.pointer) == 1 }
    }

    /// `self ^ exponent mod m` for an odd modulus, with OpenSSL's constant-time Montgomery
    /// ladder: every exponent here (a, x, a + u·x) is secret.
    func modPow(_ exponent: BigNum, modulus m: BigNum, _ mont: MontgomeryContext, _ ctx: BNContext) throws -> BigNum {
        try Self.make { r in
            authctl_bn_mod_exp_mont_consttime(r, pointer, exponent.pointer, m.pointer, ctx.pointer, mont.pointer) == 1
        }
    }
}

/// An OpenSSL `BN_CTX` (scratch space for one computation); not shared between threads.
final class BNContext {
    let pointer: OpaquePointer

    init() throws {
        try LibCrypto.require()
        guard let ctx = authctl_bn_ctx_new() else { throw SRPError.arithmeticFailure }
        pointer = ctx
    }

    deinit {
        authctl_bn_ctx_free(pointer)
    }
}

/// Montgomery constants for one odd modulus, so that several exponentiations mod N
/// share them. Read-only once made, hence `@unchecked Sendable`.
final class MontgomeryContext: @unchecked Sendable {
    let pointer: OpaquePointer

    init(modulus: BigNum, _ ctx: BNContext) throws {
        guard let mont = authctl_bn_mont_ctx_new() else { throw SRPError.arithmeticFailure }
        guard authctl_bn_mont_ctx_set(mont, modulus.pointer, ctx.pointer) == 1 else {
            authctl_bn_mont_ctx_free(mont)
            throw SRPError.arithmeticFailure
        }
        pointer = mont
    }

    deinit {
        authctl_bn_mont_ctx_free(pointer)
    }
}

/// libcrypto, loaded with dlopen on the first big-integer operation (COpenSSL.h).
enum LibCrypto {
    /// Throws `SRPError` (code `.libraryUnavailable`) when libcrypto cannot be loaded.
    static func require() throws {
        guard authctl_bn_load() == 1 else {
            throw SRPError(
                code: .libraryUnavailable,
                message: "cannot compute SRP values: \(String(cString: authctl_bn_load_error()))")
        }
    }
}

/// Strict hexadecimal coding.
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Hex digits (either case) to big-endian bytes; an odd count gets a leading zero nibble.
    /// Nil for an empty string or any character that is not a hex digit.
    static func decode(_ hex: String) -> [UInt8]? {
        let utf8 = Array(hex.utf8)
        guard !utf8.isEmpty else { return nil }
        var nibbles = [UInt8]()
        nibbles.reserveCapacity(utf8.count + 1)
        if utf8.count % 2 == 1 { nibbles.append(0) }
        for char in utf8 {
            switch char {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibbles.append(char - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibbles.append(char - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibbles.append(char - UInt8(ascii: "A") + 10)
            default: return nil
            }
        }
        var out = [UInt8]()
        out.reserveCapacity(nibbles.count / 2)
        var i = 0
        while i < nibbles.count {
            out.append(nibbles[i] << 4 | nibbles[i + 1])
            i += 2
        }
        return out
    }
}

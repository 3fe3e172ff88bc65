import BigInt
import Crypto
import Foundation

/// A test-side Cognito user pool: the *server* half of SRP-6a, written from the server
/// equations with attaswift BigInt, so the client (OpenSSL BIGNUM) is checked against an
/// independent big-integer implementation and an independent reading of padHex.
///
///     registration:  salt random, x = H(pad(salt) | H(pool | user | ":" | password)), v = g^x
///     challenge:     b random (256 bits), B = (k·v + g^b) mod N
///     verification:  u = H(pad(A) | pad(B)), S = (A · v^u)^b mod N,
///                    key = HKDF(pad(S), salt: pad(u), "Caldera Derived Key", 16),
///                    expected = HMAC(key, pool | user | SECRET_BLOCK | TIMESTAMP)
final class SRPVerifier {
    struct Challenge {
        let userIdForSRP: String
        let saltHex: String
        let srpBHex: String
        let secretBlock: String
    }

    enum Failure: Error { case invalidA, noChallenge }

    // RFC 5054 appendix A, 3072-bit group; typed again here on purpose.
    static let n = BigUInt(
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74"
            + "020BBEA63B139B22514A08798E3404DDEF9519B3CD3A431B302B0A6DF25F1437"
            + "4FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
            + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE45B3DC2007CB8A163BF05"
            + "98DA48361C55D39A69163FA8FD24CF5F83655D23DCA3AD961C62F356208552BB"
            + "9ED529077096966D670C354E4ABC9804F1746C08CA18217C32905E462E36CE3B"
            + "E39E772C180E86039B2783A2EC07A28FB5C55DF06F4C52C9DE2BCBF695581718"
            + "3995497CEA956AE515D2261898FA051015728E5A8AAAC42DAD33170D04507A33"
            + "A85521ABDF1CBA64ECFB850458DBEF0A8AEA71575D060C7DB3970F85A6E1E4C7"
            + "ABF5AE8CDB0933D71E8C94E04A25619DCEE3D2261AD2EE6BF12FFA06D98A0864"
            + "D87602733EC86A64521F2B18177B200CBBE117577A615D6C770988C0BAD946E2"
            + "08E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF",
        radix: 16)!
    static let g = BigUInt(2)
    static let k = BigUInt(Data(sha256(padHexBytes(n) + padHexBytes(g))))

    let poolName: String
    let userIdForSRP: String
    let salt: BigUInt
    let v: BigUInt
    private var b = BigUInt(0)
    private var largeB = BigUInt(0)
    private var secretBlock = Data()
    private var largeA: BigUInt?

    /// Registers `userIdForSRP` with `password` in pool `userPoolId` (`region_name`).
    init(userPoolId: String, userIdForSRP: String, password: String) {
        poolName = String(userPoolId.split(separator: "_")[1])
        self.userIdForSRP = userIdForSRP
        salt = BigUInt(Data(Self.randomBytes(16)))
        let identity = Self.sha256(Array("\(poolName)\(userIdForSRP):\(password)".utf8))
        let x = BigUInt(Data(Self.sha256(Self.padHexBytes(salt) + identity)))
        v = Self.modPow(Self.g, x)
    }

    /// A device registered with ConfirmDevice: the pool name is the DeviceGroupKey, the user the
    /// DeviceKey, and salt and verifier are what the client sent (DeviceSecretVerifierConfig).
    init(deviceGroupKey: String, deviceKey: String, salt: BigUInt, verifier: BigUInt) {
        poolName = deviceGroupKey
        userIdForSRP = deviceKey
        self.salt = salt
        v = verifier
    }

    /// InitiateAuth(USER_SRP_AUTH, SRP_A): answers with PASSWORD_VERIFIER parameters.
    func challenge(srpAHex: String) throws -> Challenge {
        guard let a = BigUInt(srpAHex, radix: 16), a % Self.n != 0 else { throw Failure.invalidA }
        largeA = a
        // 256 bits, the minimum RFC 5054 (section 3) asks for: attaswift BigInt in a debug build
        // needs about 4 ms per 3072-bit reduction, so a longer b would only slow the tests.
        b = BigUInt(Data(Self.randomBytes(32)))
        largeB = (Self.k * v + Self.modPow(Self.g, b)) % Self.n
        secretBlock = Data(Self.randomBytes(64))
        return Challenge(
            userIdForSRP: userIdForSRP,
            saltHex: String(salt, radix: 16),
            srpBHex: String(largeB, radix: 16),
            secretBlock: secretBlock.base64EncodedString())
    }

    /// RespondToAuthChallenge(PASSWORD_VERIFIER): true when the client proved the password.
    func verify(signature: String, timestamp: String) throws -> Bool {
        guard let a = largeA else { throw Failure.noChallenge }
        let u = BigUInt(Data(Self.sha256(Self.padHexBytes(a) + Self.padHexBytes(largeB))))
        let s = Self.modPow(a * Self.modPow(v, u) % Self.n, b)
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Self.padHexBytes(s)),
            salt: Self.padHexBytes(u),
            info: Array("Caldera Derived Key".utf8),
            outputByteCount: 16)
        var message = Data(poolName.utf8)
        message.append(contentsOf: userIdForSRP.utf8)
        message.append(secretBlock)
        message.append(contentsOf: timestamp.utf8)
        let expected = Data(HMAC<SHA256>.authenticationCode(for: message, using: key)).base64EncodedString()
        return expected == signature
    }

    // MARK: Modular exponentiation mod N

    /// `base^exponent mod N`: left-to-right, 4-bit fixed window, Montgomery multiplication with
    /// R = 2^3072 on attaswift BigUInt. Same result as `base.power(exponent, modulus: n)`
    /// (see `testVerifierModPowMatchesBigIntPower`), about twice as fast in a debug build,
    /// where BigUInt's division costs four 3072-bit multiplications.
    static func modPow(_ base: BigUInt, _ exponent: BigUInt) -> BigUInt {
        var table = [montgomeryOne, (base % n) << rBits % n]
        for i in 2..<16 { table.append(montgomeryMultiply(table[i - 1], table[1])) }
        var result = montgomeryOne
        var bit = (exponent.bitWidth + 3) / 4 * 4  // BigUInt.bitWidth: significant bits only
        while bit > 0 {
            bit -= 4
            for _ in 0..<4 { result = montgomeryMultiply(result, result) }
            let digit = Int((exponent >> bit) & 15)
            if digit != 0 { result = montgomeryMultiply(result, table[digit]) }
        }
        return montgomeryMultiply(result, 1)
    }

    private static let rBits = 3072
    private static let rMask = (BigUInt(1) << rBits) - 1
    /// R mod N, i.e. 1 in Montgomery form.
    private static let montgomeryOne = (BigUInt(1) << rBits) % n
    /// -N^-1 mod R, by Newton's iteration (each step doubles the correct low bits).
    private static let nPrime: BigUInt = {
        var inverse = BigUInt(1)
        for _ in 0..<12 {  // 1 -> 4096 correct bits
            inverse = (inverse * (rMask + 3 - (n * inverse & rMask))) & rMask  // x·(2 - n·x) mod R
        }
        return (rMask + 1 - inverse) & rMask
    }()

    /// a·b·R^-1 mod N for a, b < N.
    private static func montgomeryMultiply(_ a: BigUInt, _ b: BigUInt) -> BigUInt {
        let t = a * b
        let m = ((t & rMask) * nPrime) & rMask
        let u = (t + m * n) >> rBits
        return u >= n ? u - n : u
    }

    // MARK: Helpers, written from the JavaScript client's description of padHex.

    /// padHex: hex string; "0" prefix if odd length; then "00" prefix if it starts with 8-f.
    static func padHexBytes(_ value: BigUInt) -> [UInt8] {
        var hex = String(value, radix: 16)
        if hex.count % 2 == 1 { hex = "0" + hex }
        if "89abcdef".contains(hex.first!) { hex = "00" + hex }
        var bytes = [UInt8]()
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }
}

import Crypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The client half of Cognito's SRP-6a (USER_SRP_AUTH), computed exactly as Cognito's own
/// clients do (amazon-cognito-identity-js `AuthenticationHelper`, pycognito `aws_srp`):
///
/// - N: the RFC 5054 3072-bit group, g = 2, H = SHA-256, k = H(pad(N) | pad(g))
/// - a: 32 random bytes (256 bits, RFC 5054's minimum; see `secretBytes`), A = g^a mod N
/// - u = H(pad(A) | pad(B)), x = H(pad(salt) | H(poolName | USER_ID_FOR_SRP | ":" | password))
/// - S = (B - k·g^x)^(a + u·x) mod N
/// - key = HKDF-SHA256(ikm: pad(S), salt: pad(u), info: "Caldera Derived Key", 16 bytes)
/// - signature = base64(HMAC-SHA256(key, poolName | USER_ID_FOR_SRP | SECRET_BLOCK | timestamp))
///
/// where pad(n) is Cognito's `padHex` read as bytes (see `BigNum.paddedBytes`).
///
/// Use one `SRPClient` per sign-in: send `srpAHex` as SRP_A in InitiateAuth, then answer the
/// PASSWORD_VERIFIER challenge with `passwordClaimSignature(...)` and the same timestamp.
public struct SRPClient: Sendable {
    /// The user pool id, e.g. `eu-west-1_AbCdEf123`.
    public let userPoolId: String
    /// The part of the pool id after the `_`, which goes into x and the signature.
    let poolName: String
    let group: SRPGroup
    /// The secret ephemeral a, in [1, N).
    let smallA: BigNum
    /// A = g^a mod N.
    let largeA: BigNum

    /// Length of the secret a. 256 bits: RFC 5054 asks for at least 256, and the best attack
    /// on a short exponent (Pollard's kangaroo) costs about 2^128 operations, the strength of
    /// the rest of the scheme. Cognito's JS client draws 1024 bits, which makes two of the three
    /// exponentiations four times slower and no stronger in practice; the server cannot tell.
    static let secretBytes = 32

    /// A client with a fresh random secret a (from the system CSPRNG).
    public init(userPoolId: String) throws {
        try self.init(
            userPoolId: userPoolId, poolName: try Self.poolName(of: userPoolId), smallABytes: Self.randomSecret)
    }

    /// The client of a remembered device's SRP (DEVICE_SRP_AUTH): the same scheme, with the
    /// DeviceGroupKey where the pool name goes and the DeviceKey as the user (see `DeviceSRP`).
    public init(deviceGroupKey: String) throws {
        guard !deviceGroupKey.isEmpty else {
            throw SRPError(code: .invalidDeviceKey, message: "the DeviceGroupKey is empty")
        }
        try self.init(userPoolId: "", poolName: deviceGroupKey, smallABytes: Self.randomSecret)
    }

    /// A client with a fixed secret a, for test vectors only.
    init(userPoolId: String, smallAHex: String) throws {
        guard let bytes = Hex.decode(smallAHex) else { throw SRPError.invalidHex("a") }
        try self.init(userPoolId: userPoolId, poolName: try Self.poolName(of: userPoolId)) { bytes }
    }

    private static func randomSecret() -> [UInt8] {
        var random = SystemRandomNumberGenerator()
        return (0..<secretBytes).map { _ in UInt8.random(in: .min ... .max, using: &random) }
    }

    private init(userPoolId: String, poolName: String, smallABytes: () -> [UInt8]) throws {
        self.userPoolId = userPoolId
        self.poolName = poolName
        let group = try SRPGroup()
        let ctx = try BNContext()
        // A zero a would make A = 1; draw again (only a fixed a can get here twice).
        var attempts = 0
        var a: BigNum
        repeat {
            attempts += 1
            a = try BigNum.fromBytes(smallABytes(), constantTime: true).mod(group.n, ctx)
        } while a.isZero && attempts < 8
        guard !a.isZero else { throw SRPError(code: .arithmeticFailure, message: "the secret SRP value a is zero") }
        self.group = group
        smallA = a
        largeA = try group.g.modPow(a, modulus: group.n, group.montgomery, ctx)
    }

    /// SRP_A for InitiateAuth: A in lowercase hexadecimal without leading zeros.
    public var srpAHex: String { largeA.hex }

    /// PASSWORD_CLAIM_SIGNATURE for RespondToAuthChallenge (PASSWORD_VERIFIER).
    ///
    /// - Parameters:
    ///   - userIdForSRP: USER_ID_FOR_SRP from the challenge parameters (not the alias typed in).
    ///   - saltHex: SALT from the challenge parameters.
    ///   - srpBHex: SRP_B from the challenge parameters.
    ///   - secretBlock: SECRET_BLOCK from the challenge parameters (base64), echoed back as
    ///     PASSWORD_CLAIM_SECRET_BLOCK.
    ///   - timestamp: `SRPTimestamp.string(for: Date())`, sent as TIMESTAMP.
    /// - Throws: `SRPError` for a bad SRP_B (B mod N = 0), u = 0, non-hex SALT/SRP_B or
    ///   non-base64 SECRET_BLOCK.
    public func passwordClaimSignature(
        userIdForSRP: String, password: String, saltHex: String, srpBHex: String,
        secretBlock: String, timestamp: String
    ) throws -> String {
        guard !secretBlock.isEmpty, let block = Data(base64Encoded: secretBlock) else {
            throw SRPError.invalidSecretBlock
        }
        let key = try authenticationKey(
            userIdForSRP: userIdForSRP, password: password, saltHex: saltHex, srpBHex: srpBHex)
        var message = Data(poolName.utf8)
        message.append(contentsOf: userIdForSRP.utf8)
        message.append(block)
        message.append(contentsOf: timestamp.utf8)
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key))
        return Data(mac).base64EncodedString()
    }

    /// The 16-byte HKDF key derived from S and u (the "password authentication key").
    func authenticationKey(userIdForSRP: String, password: String, saltHex: String, srpBHex: String) throws -> [UInt8] {
        let n = group.n
        let largeB = try BigNum.fromHex(srpBHex, name: "SRP_B")
        let salt = try BigNum.fromHex(saltHex, name: "SALT")
        let ctx = try BNContext()

        guard try !largeB.mod(n, ctx).isZero else { throw SRPError.invalidServerB }

        // u = H(pad(A) | pad(B))
        let u = try BigNum.fromBytes(Self.sha256(largeA.paddedBytes + largeB.paddedBytes))
        guard !u.isZero else { throw SRPError.zeroU }

        // x = H(pad(salt) | H(poolName | userId | ":" | password))
        let identity = Self.sha256(Array("\(poolName)\(userIdForSRP):\(password)".utf8))
        let x = try BigNum.fromBytes(Self.sha256(salt.paddedBytes + identity), constantTime: true)

        // S = (B - k·g^x)^(a + u·x) mod N; BN_mod_sub keeps B - k·g^x in [0, N).
        let gx = try group.g.modPow(x, modulus: n, group.montgomery, ctx)
        let kgx = try group.k.modMultiplied(by: gx, modulus: n, ctx)
        let base = try largeB.modSubtracting(kgx, modulus: n, ctx)
        let exponent = try smallA.adding(u.multiplied(by: x, ctx))
        let s = try base.modPow(exponent, modulus: n, group.montgomery, ctx)

        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: s.paddedBytes),
            salt: u.paddedBytes,
            info: Array("Caldera Derived Key".utf8),
            outputByteCount: 16)
        return key.withUnsafeBytes { Array($0) }
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: bytes))
    }

    /// `eu-west-1_AbC123` -> `AbC123` (the text between the first and any second `_`, as
    /// Cognito's clients take `split('_')[1]`).
    static func poolName(of userPoolId: String) throws -> String {
        let parts = userPoolId.split(separator: "_", omittingEmptySubsequences: false)
        guard parts.count >= 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw SRPError.invalidUserPoolId(userPoolId)
        }
        return String(parts[1])
    }
}

/// The fixed SRP group and multiplier: N (RFC 5054, 3072-bit), g = 2, k = H(pad(N) | pad(g)).
struct SRPGroup: Sendable {
    let n: BigNum
    let g: BigNum
    let k: BigNum
    let montgomery: MontgomeryContext

    init() throws {
        n = try BigNum.fromHex(Self.nHex, name: "N")
        g = try BigNum.fromWord(2)
        k = try BigNum.fromBytes(SRPClient.sha256(n.paddedBytes + g.paddedBytes))
        montgomery = try MontgomeryContext(modulus: n, BNContext())
    }

    /// RFC 5054 appendix A, 3072-bit group (the prime Cognito uses).
    static let nHex =
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
        + "08E24FA074E5AB3143DB5BFCE0FD108E4B82D120A93AD2CAFFFFFFFFFFFFFFFF"
}

import COpenSSL
import Crypto
import Synchronization
import _CryptoExtras

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Reads one authctl item from the Secret Service over a private D-Bus connection, without
/// libsecret, for the commands that run before every kubectl or AWS CLI request.
///
/// Why: libsecret is 11 shared libraries to load and a 1024-bit Diffie-Hellman done in
/// libgcrypt (23 M of the 42 M instructions of `authctl token`; docs/performance.md). This
/// reader speaks the same protocol with the same protection: the secret crosses the bus only
/// encrypted, under `dh-ietf1024-sha256-aes128-cbc-pkcs7` (the same group, HKDF-SHA256 and
/// AES-128-CBC as libsecret), with the group arithmetic in OpenSSL (constant-time Montgomery),
/// which is loaded anyway to refresh. There is no plain-text transfer: a service that refuses
/// the algorithm is left to libsecret, which refuses too.
///
/// It only reads what is already unlocked. Anything else (a locked item, which needs a prompt;
/// an address other than a Unix socket; an error answer; libcrypto missing) is `.declined`, and
/// the caller asks libsecret, which reaches the same service and explains the failure in the
/// store's usual words. Only a deadline that passes is thrown: asking libsecret then would make
/// the caller wait twice. Writes and deletions always go through libsecret.
///
/// One connection and one encrypted session serve every read of the process.
final class SecretServiceDirectRead: Sendable {
    enum Outcome: Equatable {
        case found([UInt8])
        case absent
        /// Only locked items match: unlocking may need a prompt, which is libsecret's part.
        case locked
        case declined(DBusConnectionFailure)
    }

    private struct Session {
        let connection: DBusConnection
        var encrypted: (path: String, key: SymmetricKey)?
    }

    private let session = Mutex<Session?>(nil)
    private let address: DBusAddress?

    init(environment: [String: String]) {
        address = DBusAddress.sessionBus(environment: environment)
    }

    static let service = "org.freedesktop.secrets"
    static let servicePath = "/org/freedesktop/secrets"
    static let algorithm = "dh-ietf1024-sha256-aes128-cbc-pkcs7"
    /// Larger than any item authctl writes (a session is a few kilobytes).
    static let maximumSecret = 256 * 1024

    /// The first unlocked item matching `attributes` (plus `xdg:schema`, as libsecret adds),
    /// decrypted. Throws `DBusConnectionFailure.timedOut` only.
    func lookup(attributes: [(String, String)], schema: String, deadline: UInt64) throws(DBusConnectionFailure)
        -> Outcome
    {
        guard let address else { return .declined(.unsupportedAddress) }
        let result = session.withLock { held -> Result<Outcome, DBusConnectionFailure> in
            do throws(DBusConnectionFailure) {
                if held == nil { held = Session(connection: try DBusConnection.open(address, deadline: deadline)) }
                return .success(
                    try Self.lookup(in: &held!, attributes: attributes + [("xdg:schema", schema)], deadline: deadline))
            } catch {
                // A connection that failed once is not reused: its state is unknown.
                held = nil
                return .failure(error)
            }
        }
        switch result {
        case .success(let outcome): return outcome
        case .failure(.timedOut): throw .timedOut
        case .failure(let failure): return .declined(failure)
        }
    }

    private static func lookup(
        in held: inout Session, attributes: [(String, String)], deadline: UInt64
    ) throws(DBusConnectionFailure) -> Outcome {
        let connection = held.connection
        let search = try connection.send(
            destination: service, path: servicePath, interface: "org.freedesktop.Secret.Service",
            member: "SearchItems", body: [.stringDictionary(attributes)])
        let found = try connection.answer(to: search, deadline: deadline).body
        guard found.count == 2, let unlocked = found[0].objectPathArrayValue,
            let locked = found[1].objectPathArrayValue
        else { throw .unexpectedAnswer("SearchItems did not answer (ao, ao)") }
        guard let item = unlocked.first else {
            if !locked.isEmpty { return .locked }
            return .absent
        }

        if held.encrypted == nil { held.encrypted = try openSession(connection, deadline: deadline) }
        let (sessionPath, key) = held.encrypted!
        let get = try connection.send(
            destination: service, path: item, interface: "org.freedesktop.Secret.Item", member: "GetSecret",
            body: [.objectPath(sessionPath)])
        let answer = try connection.answer(to: get, deadline: deadline).body
        guard answer.count == 1, case .structure(let fields) = answer[0], fields.count == 4,
            fields[0].objectPathValue == sessionPath, let iv = fields[1].byteArrayValue,
            let ciphertext = fields[2].byteArrayValue, fields[3].stringValue != nil
        else { throw .unexpectedAnswer("GetSecret did not answer (o, ay, ay, s) for our session") }
        guard iv.count == 16, !ciphertext.isEmpty, ciphertext.count % 16 == 0, ciphertext.count <= maximumSecret
        else { throw .unexpectedAnswer("a secret whose parameters or length are not AES-128-CBC's") }
        do {
            var plaintext = try AES._CBC.decrypt(ciphertext, using: key, iv: AES._CBC.IV(ivBytes: iv))
            defer { plaintext.resetBytes(in: 0..<plaintext.count) }
            return .found(Array(plaintext))
        } catch {
            throw .unexpectedAnswer("a secret that does not decrypt under the session's key")
        }
    }

    /// `OpenSession` with our Diffie-Hellman public key; the service answers with its own and
    /// the session's path. The AES key is HKDF-SHA256 (no salt, no info) of the shared secret
    /// padded to the prime's length, as the specification and libsecret have it.
    private static func openSession(
        _ connection: DBusConnection, deadline: UInt64
    ) throws(DBusConnectionFailure) -> (path: String, key: SymmetricKey) {
        guard let exchange = try? DiffieHellmanGroup2.KeyPair() else {
            throw .unexpectedAnswer("libcrypto is not available for the key exchange")
        }
        let open = try connection.send(
            destination: service, path: servicePath, interface: "org.freedesktop.Secret.Service",
            member: "OpenSession", body: [.string(algorithm), .variant(.bytes(exchange.publicKey))])
        let answer = try connection.answer(to: open, deadline: deadline).body
        guard answer.count == 2, case .variant(let output) = answer[0], let peer = output.byteArrayValue,
            let path = answer[1].objectPathValue, path != "/"
        else { throw .unexpectedAnswer("OpenSession did not answer (v: ay, o)") }
        guard var shared = try? exchange.sharedSecret(peer: peer) else {
            throw .unexpectedAnswer("the service's public key is not in the group")
        }
        defer { shared.wipe() }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: shared), salt: [UInt8](), info: [UInt8](), outputByteCount: 16)
        return (path, key)
    }
}

/// The 1024-bit MODP group of RFC 2409 (the second Oakley group, generator 2), which the Secret
/// Service's `dh-ietf1024-…` algorithm names, over OpenSSL's BIGNUM.
struct DiffieHellmanGroup2 {
    static let prime: [UInt8] = Hex.decode(
        "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A0879"
            + "8E3404DDEF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B"
            + "0BFF5CB6F406B7EDEE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF")!

    static let exponentBytes = 32

    enum Failure: Error { case arithmetic, peerNotInGroup }

    /// One ephemeral key pair; its private exponent stays in a constant-time BIGNUM and is
    /// cleared when the pair goes.
    final class KeyPair {
        private let privateKey: OwnedBigNum
        let publicKey: [UInt8]

        /// The private exponent is 256 random bits. The group's strength is 80 bits whatever the
        /// exponent's length; NIST SP 800-56A (rev. 3, 5.6.1.1.4) asks a safe-prime group's key
        /// for at least twice that, 160 bits. libsecret draws 1023 bits, which costs each of the
        /// two exponentiations four times as much and buys nothing the group does not cap.
        convenience init() throws {
            var random = [UInt8](repeating: 0, count: DiffieHellmanGroup2.exponentBytes)
            var generator = SystemRandomNumberGenerator()
            repeat {
                for index in random.indices { random[index] = generator.next() }
            } while random.dropLast().allSatisfy({ $0 == 0 }) && random.last! < 2
            defer { random.wipe() }
            try self.init(privateExponent: random)
        }

        /// A pair with a given exponent (big-endian): for the tests' known answers.
        init(privateExponent: [UInt8]) throws {
            guard authctl_bn_load() == 1 else { throw Failure.arithmetic }
            privateKey = try OwnedBigNum(bytes: privateExponent, secret: true)
            publicKey = try DiffieHellmanGroup2.power(try OwnedBigNum(word: 2), privateKey)
        }

        /// `peer ^ private mod p`, big-endian and padded to the prime's length. The peer's key
        /// must lie in 2 ... p-2: 0, 1 and p-1 would make the secret guessable.
        func sharedSecret(peer: [UInt8]) throws -> [UInt8] {
            let significant = Array(peer.drop { $0 == 0 })
            var pMinusOne = DiffieHellmanGroup2.prime
            pMinusOne[pMinusOne.count - 1] -= 1
            let padded = [UInt8](repeating: 0, count: max(0, pMinusOne.count - significant.count)) + significant
            guard significant.count <= pMinusOne.count, significant.count > 1 || (significant.first ?? 0) > 1,
                padded.lexicographicallyPrecedes(pMinusOne)
            else { throw Failure.peerNotInGroup }
            return try DiffieHellmanGroup2.power(try OwnedBigNum(bytes: significant, secret: false), privateKey)
        }
    }

    /// `base ^ exponent mod prime`, padded to the prime's length.
    private static func power(_ base: OwnedBigNum, _ exponent: OwnedBigNum) throws -> [UInt8] {
        let modulus = try OwnedBigNum(bytes: prime, secret: false)
        let result = try OwnedBigNum(bytes: [], secret: true)
        guard let context = authctl_bn_ctx_new() else { throw Failure.arithmetic }
        defer { authctl_bn_ctx_free(context) }
        guard
            authctl_bn_mod_exp_mont_consttime(
                result.pointer, base.pointer, exponent.pointer, modulus.pointer, context, nil) == 1
        else { throw Failure.arithmetic }
        let count = (Int(authctl_bn_num_bits(result.pointer)) + 7) / 8
        var bytes = [UInt8](repeating: 0, count: prime.count)
        bytes.withUnsafeMutableBufferPointer { buffer in
            _ = authctl_bn_bn2bin(result.pointer, buffer.baseAddress! + (prime.count - count))
        }
        return bytes
    }
}

/// One BIGNUM, cleared and freed with its owner.
private final class OwnedBigNum {
    let pointer: OpaquePointer

    init(bytes: [UInt8], secret: Bool) throws {
        guard let made = secret ? authctl_bn_new_secret() : authctl_bn_new() else {
            throw DiffieHellmanGroup2.Failure.arithmetic
        }
        pointer = made
        let converted = bytes.withUnsafeBufferPointer {
            authctl_bn_bin2bn($0.baseAddress, Int32($0.count), made)
        }
        guard converted != nil else { throw DiffieHellmanGroup2.Failure.arithmetic }
    }

    convenience init(word: UInt) throws {
        try self.init(bytes: [], secret: false)
        guard authctl_bn_set_word(pointer, word) == 1 else { throw DiffieHellmanGroup2.Failure.arithmetic }
    }

    deinit { authctl_bn_clear_free(pointer) }
}

extension [UInt8] {
    /// Zeroes the bytes in place (a secret's copy, before the array goes), with a call the
    /// optimiser may not drop as a dead store.
    mutating func wipe() {
        withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { explicit_bzero(base, raw.count) }
        }
    }
}

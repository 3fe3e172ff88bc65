import BigInt
import Foundation
import Synchronization
import XCTest

@testable import CognitoClient

final class SRPTests: XCTestCase {
    // The public vector (amazon-cognito-identity-js / pycognito tests).
    let vectorPool = "eu-west-1_myPool"
    let vectorSecretBlock = Data("secretssecrestssecrets".utf8).base64EncodedString()
    let vectorTimestamp = "Tue Jul 10 11:01:00 UTC 2018"

    func testPublicVectorKeyAndSignature() throws {
        // a = 1234567890 = 0x499602d2
        let client = try SRPClient(userPoolId: vectorPool, smallAHex: String(1_234_567_890, radix: 16))
        let key = try client.authenticationKey(
            userIdForSRP: "test", password: "test", saltHex: "499602d2", srpBHex: "499602d2")
        XCTAssertEqual(Hex.encode(key), "d96cde6c95dda17175c1293140c5a81f")
        let signature = try client.passwordClaimSignature(
            userIdForSRP: "test", password: "test", saltHex: "499602d2", srpBHex: "499602d2",
            secretBlock: vectorSecretBlock, timestamp: vectorTimestamp)
        XCTAssertEqual(signature, "tdvQu/Li/qWl8Nni0aFPs+MwY4rvKZm0kSMrGIMSUHk=")
        // Here B < k·g^x mod N, so this vector also covers the negative B - k·g^x case.
    }

    /// A full-size vector generated once with pycognito 2024.5.1 (Cognito's Python client):
    /// `AWSSRP` with `generate_random_small_a` patched to return a, then
    /// `get_password_authentication_key(userId, password, B, salt)` for the key and Python's
    /// hmac over poolName + userId + SECRET_BLOCK + TIMESTAMP for the signature.
    /// 1024-bit a; A and B of 3072 bits whose first hex digit is >= 8 and a salt with its top
    /// bit set, so every padHex "00" prefix is exercised (the public vector uses tiny values).
    func testFullSizeVectorFromPycognito() throws {
        let smallA =
            "1fc0dba1357e872dd3c1f50bc92149c35cdc7e91e5738b074b264943cfb86c5f"
            + "cc98db4dd7e5ef707e4217d92b78fd6d7299611aaec57c3d4cea396b48e21236"
            + "defd78ae50cfc2b9a399ddf001cc4193a8307beaf5c7369bd66671a69d21c2db"
            + "8ae499288a4a449b8690f2944e0144f565729c71d19ba6e4a5c4395c529863ee"
        let expectedA =
            "958a3597028809e7f952d066a82144da49a468e80da635ad15f8c7c3dd66121d"
            + "62c09c1520e75c381a8733a3ba0d61ccf5c67076061c4b63ab71f0d4de4410c4"
            + "5ae0d7b84780008106f33b05970513d8cb3b0a7a036b3b0b32a4cbeef155dda8"
            + "311c961875587bfee7892af78900c45a511d7a52e3bfcb2d0a40c3c18cca3f07"
            + "de7584918512eda80d630e37a23bbef21d20e0c935f78da4410f92da7d7dd88f"
            + "0ba66709a695254514809e101580a474edd59abd34151ff7d0102114e14a8307"
            + "427e525d2890b62c574303ff3d072a6d733f44b0f93248511f7b3baf0614c734"
            + "e3f4ab252fbf3743ec2dc710e495e0ac4c5c569e31eec40d0420eade8a70d222"
            + "c05622d4e06ad7c7c29727a1d1d7a046a76f2edc075cf735c6aadac8b4bc43f6"
            + "6f12697ea5b42361aa93cbe7ac6fdb36d2f783e5bb51ea70a72608a6d415ecf2"
            + "9bfe6483ad6d3c2ffb37a20ace696eb41d303b69886698f637a4d77bcced7ab9"
            + "ab0898be15defd78c610e781968d805b5d90d2b8d08d58fced721c9de6f27175"
        let srpB =
            "a4815e61b47a0cb1aaf61595b4368ae6f79d3a421e9505b4f3fdad0f20413f22"
            + "00b31456c9af4f315fda44d1dacaf852a9a8d48730789e5d54efd4b7df8e46ab"
            + "c7c1beb5986a9a58f0f93166c0c4730dc63787081d0f8ec8e95a19ba76cacf78"
            + "341ca43ad28b99c86bb6e15c24527ac11c18dcec1bf716286cf4f9603a1c9e3a"
            + "08adaffab8e88c60bdaeaf9df655ca40d718b65344c0361ffa25c711fb9045cc"
            + "c9d11b0709678091f971b434e896809f23329fb9fca6352c25348e5565f18c07"
            + "933635d133772a4a2cf2a22906ddd82d4eb8a39431302c1f5d3860fa040cfa06"
            + "5b2a3b581c469350cb83cecbc89f2478641ad5696d5d0411c8bbfcb202d65027"
            + "cfa8f1cd79ea47ab2e13188f749819aa1db2a06411b3e4ee96f49a3b61dece71"
            + "a425dcca0f79866e1a1d73fcbbe6a15e57c335e1a93ad030847309eb91fe3fc1"
            + "14296fd56380654abe00f597551999434cad4a495815e02261c31c051ca88a5c"
            + "b709628f4cb8b8103c20b0aa659e129e0e0a3bb7388c192ddf5fd73e2b4de527"
        let client = try SRPClient(userPoolId: "us-west-2_Xy9AbC12D", smallAHex: smallA)
        XCTAssertEqual(client.srpAHex, expectedA)
        let userId = "5b8f3a2e-1c4d-4e6f-8a9b-0c1d2e3f4a5b"
        let password = "P@ssw\u{F6}rd with spaces & unicode \u{2603}"
        let key = try client.authenticationKey(
            userIdForSRP: userId, password: password, saltHex: "99adf09de118a1ca0787e07b82b3d8e0", srpBHex: srpB)
        XCTAssertEqual(Hex.encode(key), "d9d3e286211009984368e29a75eac08b")
        let signature = try client.passwordClaimSignature(
            userIdForSRP: userId, password: password, saltHex: "99adf09de118a1ca0787e07b82b3d8e0", srpBHex: srpB,
            secretBlock: "GBgJ0BSn/TzQ77dbrtGhggjspFp8j1gxss28lfRH2tmBpQqUSMlQR0SI/jRy5DAR",
            timestamp: "Mon Jan 5 09:03:07 UTC 2026")
        XCTAssertEqual(signature, "1NmXWwZp6nsTGD4zeLZunNPuQfDpP54Yfi/w480XvFA=")
    }

    func testHexSpellingOfServerValuesDoesNotMatter() throws {
        let client = try SRPClient(userPoolId: vectorPool, smallAHex: "499602d2")
        let signature = try client.passwordClaimSignature(
            userIdForSRP: "test", password: "test", saltHex: "0000499602D2", srpBHex: "499602D2",
            secretBlock: vectorSecretBlock, timestamp: vectorTimestamp)
        XCTAssertEqual(signature, "tdvQu/Li/qWl8Nni0aFPs+MwY4rvKZm0kSMrGIMSUHk=")
    }

    func testSrpAIsGToTheAModN() throws {
        let client = try SRPClient(userPoolId: vectorPool, smallAHex: "499602d2")
        let expected = BigUInt(2).power(BigUInt(1_234_567_890), modulus: SRPVerifier.n)
        XCTAssertEqual(client.srpAHex, String(expected, radix: 16))
        XCTAssertEqual(client.srpAHex, client.srpAHex.lowercased())
        XCTAssertFalse(client.srpAHex.hasPrefix("0"))
    }

    func testRandomAIsFreshAndInRange() throws {
        let first = try SRPClient(userPoolId: vectorPool)
        let second = try SRPClient(userPoolId: vectorPool)
        XCTAssertNotEqual(first.srpAHex, second.srpAHex)
        for client in [first, second] {
            let a = try XCTUnwrap(BigUInt(client.srpAHex, radix: 16))
            XCTAssertGreaterThan(a, 1)
            XCTAssertLessThan(a, SRPVerifier.n)
            // 32 random bytes: at least 200 bits unless the CSPRNG is broken (chance 2^-56).
            XCTAssertGreaterThan(client.smallA.bitCount, 200)
            XCTAssertLessThanOrEqual(client.smallA.bitCount, 256)
        }
    }

    func testGroupConstantsMatchIndependentComputation() throws {
        let group = try SRPGroup()
        XCTAssertEqual(group.n.hex, String(SRPVerifier.n, radix: 16))
        XCTAssertEqual(group.k.hex, String(SRPVerifier.k, radix: 16))
        XCTAssertEqual(group.n.bitCount, 3072)
    }

    func testPadHexBytes() throws {
        func padded(_ hex: String) throws -> [UInt8] { try BigNum.fromHex(hex, name: "t").paddedBytes }
        XCTAssertEqual(try padded("0"), [0x00])
        XCTAssertEqual(try padded("7f"), [0x7f])
        XCTAssertEqual(try padded("80"), [0x00, 0x80])
        XCTAssertEqual(try padded("100"), [0x01, 0x00])
        XCTAssertEqual(try padded("00000abc"), [0x0a, 0xbc])
        XCTAssertEqual(try padded("f00"), [0x0f, 0x00])
        for _ in 0..<50 {
            let value = BigUInt(Data(SRPVerifier.randomBytes(Int.random(in: 1...40))))
            XCTAssertEqual(
                try BigNum.fromHex(String(value, radix: 16), name: "t").paddedBytes,
                SRPVerifier.padHexBytes(value))
        }
    }

    // MARK: Against the independent verifier

    func testVerifierModPowMatchesBigIntPower() {
        // The verifier's Montgomery exponentiation against BigUInt.power (kept to short
        // exponents: BigUInt.power needs ~7 ms per exponent bit in a debug build).
        let n = SRPVerifier.n
        let random = BigUInt(Data(SRPVerifier.randomBytes(384))) % n
        for base in [BigUInt(0), 1, 2, n - 1, random] {
            for exponent in [BigUInt(0), 1, 2, 15, 16, 17, 255, 65537] {
                XCTAssertEqual(SRPVerifier.modPow(base, exponent), base.power(exponent, modulus: n))
            }
        }
        let exponent = BigUInt(Data(SRPVerifier.randomBytes(8)))
        XCTAssertEqual(SRPVerifier.modPow(random, exponent), random.power(exponent, modulus: n))
    }

    private static func signIn(
        client: SRPClient, server: SRPVerifier, userIdForSRP: String? = nil, password: String
    ) throws -> Bool {
        let challenge = try server.challenge(srpAHex: client.srpAHex)
        let timestamp = SRPTimestamp.string(for: Date())
        let signature = try client.passwordClaimSignature(
            userIdForSRP: userIdForSRP ?? challenge.userIdForSRP, password: password,
            saltHex: challenge.saltHex, srpBHex: challenge.srpBHex,
            secretBlock: challenge.secretBlock, timestamp: timestamp)
        return try server.verify(signature: signature, timestamp: timestamp)
    }

    func testCorrectPasswordAcceptedByIndependentVerifier() throws {
        // Independent random runs (fresh salt, a, b, secret block), two at a time: the BigInt
        // verifier takes seconds per sign-in in a debug build.
        let pool = "us-east-1_Ab12Cd34E"
        let runs = 4
        let results = ResultBox(count: runs)
        DispatchQueue.concurrentPerform(iterations: runs) { run in
            let userId = "7c9b2c4e-0d1f-4b8a-9e3a-\(run)5d6e7f8a9b0c"
            let password = "Corr3ct horse battery staple! \u{FC} \(run)"
            let server = SRPVerifier(userPoolId: pool, userIdForSRP: userId, password: password)
            results.set(
                run, Result { try Self.signIn(client: SRPClient(userPoolId: pool), server: server, password: password) }
            )
        }
        for run in 0..<runs {
            XCTAssertTrue(try XCTUnwrap(results.get(run)).get(), "run \(run)")
        }
    }

    func testWrongPasswordRefused() throws {
        let pool = "eu-west-1_myPool"
        let server = SRPVerifier(userPoolId: pool, userIdForSRP: "alice", password: "Secret-1")
        XCTAssertFalse(try Self.signIn(client: SRPClient(userPoolId: pool), server: server, password: "secret-1"))
    }

    func testDifferentUserIdForSRPRefused() throws {
        let pool = "eu-west-1_myPool"
        let server = SRPVerifier(userPoolId: pool, userIdForSRP: "alice", password: "Secret-1")
        XCTAssertFalse(
            try Self.signIn(
                client: SRPClient(userPoolId: pool), server: server, userIdForSRP: "alice@example.com",
                password: "Secret-1"))
    }

    func testDifferentPoolNameRefused() throws {
        let server = SRPVerifier(userPoolId: "eu-west-1_myPool", userIdForSRP: "alice", password: "Secret-1")
        XCTAssertFalse(
            try Self.signIn(
                client: SRPClient(userPoolId: "eu-west-1_otherPool"), server: server, password: "Secret-1"))
    }

    // MARK: Rejected input

    private func assertSRPError(
        _ code: SRPError.Code, file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void
    ) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            XCTAssertEqual((error as? SRPError)?.code, code, "\(error)", file: file, line: line)
        }
    }

    func testServerBThatIsZeroModNRejected() throws {
        let client = try SRPClient(userPoolId: vectorPool)
        let n = SRPVerifier.n
        for b in [BigUInt(0), n, 2 * n, 5 * n] {
            assertSRPError(.invalidServerB) {
                _ = try client.passwordClaimSignature(
                    userIdForSRP: "test", password: "test", saltHex: "499602d2",
                    srpBHex: String(b, radix: 16), secretBlock: vectorSecretBlock, timestamp: vectorTimestamp)
            }
        }
        XCTAssertThrowsError(
            try client.authenticationKey(
                userIdForSRP: "test", password: "test", saltHex: "499602d2", srpBHex: "000")
        ) { error in
            XCTAssertEqual(error as? SRPError, .invalidServerB)
        }
    }

    func testNonHexServerValuesRejected() throws {
        let client = try SRPClient(userPoolId: vectorPool)
        for bad in ["", "xyz", "0x1234", " 1234", "12 34", "-1234", "12345g"] {
            assertSRPError(.invalidHex) {
                _ = try client.authenticationKey(userIdForSRP: "u", password: "p", saltHex: "ab", srpBHex: bad)
            }
            assertSRPError(.invalidHex) {
                _ = try client.authenticationKey(userIdForSRP: "u", password: "p", saltHex: bad, srpBHex: "ab")
            }
        }
    }

    func testBadSecretBlockRejected() throws {
        let client = try SRPClient(userPoolId: vectorPool)
        for bad in ["", "not base64!", "abc", "@@@@"] {
            assertSRPError(.invalidSecretBlock) {
                _ = try client.passwordClaimSignature(
                    userIdForSRP: "test", password: "test", saltHex: "499602d2", srpBHex: "499602d2",
                    secretBlock: bad, timestamp: vectorTimestamp)
            }
        }
    }

    func testInvalidUserPoolIdRejected() {
        for bad in ["", "myPool", "eu-west-1_", "_myPool"] {
            assertSRPError(.invalidUserPoolId) { _ = try SRPClient(userPoolId: bad) }
        }
        XCTAssertEqual(try SRPClient.poolName(of: "eu-west-1_myPool"), "myPool")
    }

    func testErrorsReadWell() {
        XCTAssertEqual(SRPError.invalidServerB.description, SRPError.invalidServerB.message)
        XCTAssertTrue(SRPError.invalidHex("SRP_B").message.contains("SRP_B"))
    }
}

/// Collects per-run results from `DispatchQueue.concurrentPerform`.
private final class ResultBox: Sendable {
    private let results: Mutex<[Result<Bool, Error>?]>
    init(count: Int) { results = Mutex(Array(repeating: nil, count: count)) }
    func set(_ index: Int, _ result: Result<Bool, Error>) { results.withLock { $0[index] = result } }
    func get(_ index: Int) -> Result<Bool, Error>? { results.withLock { $0[index] } }
}

final class SRPTimestampTests: XCTestCase {
    private func at(_ seconds: Double) -> String {
        SRPTimestamp.string(for: Date(timeIntervalSince1970: seconds))
    }

    func testVectorTimestamp() {
        XCTAssertEqual(at(1_531_220_460), "Tue Jul 10 11:01:00 UTC 2018")
    }

    func testSingleDigitDayIsNotPadded() {
        XCTAssertEqual(at(1_530_403_200), "Sun Jul 1 00:00:00 UTC 2018")
        XCTAssertEqual(at(976_352_707), "Sat Dec 9 09:05:07 UTC 2000")
    }

    func testMidnightAndLateEvening() {
        XCTAssertEqual(at(1_530_403_200), "Sun Jul 1 00:00:00 UTC 2018")
        XCTAssertEqual(at(1_530_489_599), "Sun Jul 1 23:59:59 UTC 2018")
        XCTAssertEqual(at(1_530_489_599.999), "Sun Jul 1 23:59:59 UTC 2018")  // never rounds up
        XCTAssertEqual(at(1_709_208_000), "Thu Feb 29 12:00:00 UTC 2024")
        XCTAssertEqual(at(0), "Thu Jan 1 00:00:00 UTC 1970")
        XCTAssertEqual(at(-0.5), "Wed Dec 31 23:59:59 UTC 1969")
    }

    func testAgreesWithPOSIXDateFormatterOnRandomDates() {
        // Test-side reference only: the library never uses DateFormatter.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE MMM d HH:mm:ss 'UTC' yyyy"
        for _ in 0..<500 {
            let date = Date(timeIntervalSince1970: Double(Int.random(in: 0...4_102_444_800)))
            XCTAssertEqual(SRPTimestamp.string(for: date), formatter.string(from: date))
        }
    }

    func testEnglishAndUTCWhateverTheLocaleAndTimeZone() throws {
        let savedLocale = setlocale(LC_ALL, nil).map { String(cString: $0) }
        let savedTZ = getenv("TZ").map { String(cString: $0) }
        defer {
            if let savedTZ { setenv("TZ", savedTZ, 1) } else { unsetenv("TZ") }
            tzset()
            _ = setlocale(LC_ALL, savedLocale ?? "C")
        }

        // de_DE.UTF-8 may not be installed (then setlocale fails and C stays); Tokyo always works.
        let german = setlocale(LC_ALL, "de_DE.UTF-8") != nil
        setenv("TZ", "Asia/Tokyo", 1)
        tzset()

        // Prove the switch took effect: local time is now UTC+9.
        var time = time_t(1_530_489_599)
        var local = tm()
        _ = localtime_r(&time, &local)
        XCTAssertEqual(local.tm_hour, 8, "TZ=Asia/Tokyo did not take effect")

        XCTAssertEqual(at(1_530_489_599), "Sun Jul 1 23:59:59 UTC 2018")
        XCTAssertEqual(at(1_531_220_460), "Tue Jul 10 11:01:00 UTC 2018")
        XCTAssertEqual(at(1_709_208_000), "Thu Feb 29 12:00:00 UTC 2024")
        if !german {
            print("note: de_DE.UTF-8 locale not installed; checked TZ=Asia/Tokyo only")
        }
    }
}

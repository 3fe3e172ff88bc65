import Foundation
import XCTest

@testable import SecureStore

/// The D-Bus wire format of the direct Secret Service read, without a bus: values encoded and
/// decoded back, messages the specification forbids refused, addresses parsed, and the key
/// exchange's arithmetic and padding.
final class DBusMessageTests: XCTestCase {
    func testValuesRoundTripThroughAMessage() throws {
        let bodies: [[DBusValue]] = [
            [],
            [.string("dh-ietf1024-sha256-aes128-cbc-pkcs7"), .variant(.bytes(Array(0..<130)))],
            [.stringDictionary([("kind", "session"), ("profile", "é ü"), ("xdg:schema", "io.github.authctl.Secret")])],
            [
                .array(.objectPath, [.objectPath("/org/freedesktop/secrets/collection/login/1")]),
                .array(.objectPath, []),
            ],
            [.structure([.objectPath("/s/1"), .bytes([1, 2, 3]), .bytes([]), .string("text/plain")])],
            [
                .byte(7), .boolean(true), .int16(-2), .uint16(65535), .int32(-70000), .uint32(1 << 31),
                .int64(-1 << 40), .uint64(1 << 63), .double(-0.5), .signature("a{sv}"), .unixFD(3),
            ],
            [.variant(.variant(.structure([.byte(1), .uint64(2)])))],
            [.array(.dictEntry(key: .uint32, value: .variant), [.dictEntry(.uint32(1), .variant(.string("x")))])],
        ]
        for (index, body) in bodies.enumerated() {
            let message = DBusMessage.methodCall(
                serial: UInt32(index + 1), destination: "org.freedesktop.secrets", path: "/org/freedesktop/secrets",
                interface: "org.freedesktop.Secret.Service", member: "SearchItems", body: body)
            let bytes = message.encoded()
            XCTAssertEqual(try DBusMessage.length(ofPrefix: Array(bytes.prefix(16))), bytes.count, "body \(index)")
            XCTAssertEqual(try DBusMessage.decode(bytes), message, "body \(index)")
        }
    }

    /// A method return as gnome-keyring writes it, in big-endian order too, decodes as the
    /// little-endian one does.
    func testBigEndianMessagesDecode() throws {
        // METHOD_RETURN, serial 5, REPLY_SERIAL 3, SIGNATURE "u", body 0x01020304.
        let bytes: [UInt8] =
            [0x42, 2, 0, 1, 0, 0, 0, 4, 0, 0, 0, 5, 0, 0, 0, 0x0F]
            + [5, 1, 0x75, 0, 0, 0, 0, 3] + [8, 1, 0x67, 0, 1, 0x75, 0] + [0] + [1, 2, 3, 4]
        let message = try DBusMessage.decode(bytes)
        XCTAssertEqual(message.kind, .methodReturn)
        XCTAssertEqual(message.replySerial, 3)
        XCTAssertEqual(message.body, [.uint32(0x0102_0304)])
    }

    func testMalformedMessagesAreRefused() throws {
        let good = DBusMessage(
            kind: .methodReturn, serial: 2, replySerial: 1,
            body: [.string("ok"), .bytes([1, 2, 3]), .boolean(false)]
        ).encoded()
        func changed(_ edit: (inout [UInt8]) -> Void) -> [UInt8] {
            var bytes = good
            edit(&bytes)
            return bytes
        }
        let bodyStart = good.count - 20
        let cases: [(String, [UInt8])] = [
            ("shorter than the fixed header", Array(good.prefix(10))),
            ("unknown byte order", changed { $0[0] = 0x58 }),
            ("protocol version 2", changed { $0[3] = 2 }),
            ("serial zero", changed { $0[8...11] = [0, 0, 0, 0] }),
            ("unknown message type", changed { $0[1] = 9 }),
            ("truncated body", Array(good.dropLast())),
            ("a body longer than its header says", good + [0]),
            ("a string without its NUL", changed { $0[bodyStart + 6] = 0x41 }),
            ("a string that is not UTF-8", changed { $0[bodyStart + 4] = 0xFF }),
            ("non-zero padding", changed { $0[bodyStart + 7] = 1 }),
            ("a boolean of 2", changed { $0[good.count - 4] = 2 }),
            ("an array running past the end", changed { $0[bodyStart + 8] = 0xF0 }),
            ("a reply without its serial", DBusMessage(kind: .methodReturn, serial: 2).encoded()),
            ("an error without a name", DBusMessage(kind: .error, serial: 2, replySerial: 1).encoded()),
            ("a call without a member", DBusMessage(kind: .methodCall, serial: 2, path: "/").encoded()),
            (
                "a message larger than authctl reads",
                changed { $0[4...7] = [0, 0, 0x20, 0] }
            ),
        ]
        for (what, bytes) in cases {
            XCTAssertThrowsError(try DBusMessage.decode(bytes), what)
        }
        XCTAssertNoThrow(try DBusMessage.decode(good))
    }

    /// A variant nested a thousand deep is refused by its depth, not by running out of stack.
    func testDeeplyNestedVariantsAreRefused() throws {
        var body: [UInt8] = []
        for _ in 0..<1000 { body += [1, 0x76, 0] }  // variant of signature "v", again and again
        body += [1, 0x79, 0, 7]
        let header =
            [UInt8(ascii: "l"), 2, 0, 1] + withUnsafeBytes(of: UInt32(body.count).littleEndian, Array.init)
            + [2, 0, 0, 0] + [0x0F, 0, 0, 0] + [5, 1, 0x75, 0, 1, 0, 0, 0] + [8, 1, 0x67, 0, 1, 0x76, 0, 0]
        XCTAssertThrowsError(try DBusMessage.decode(header + body)) { error in
            XCTAssertEqual(error as? DBusWireError, .malformed("values nested deeper than 64"))
        }
    }

    func testSignatures() throws {
        XCTAssertEqual(
            try DBusType.parse(signature: "a{ss}oay(oayays)"),
            [
                .array(.dictEntry(key: .string, value: .string)), .objectPath, .array(.byte),
                .structure([.objectPath, .array(.byte), .array(.byte), .string]),
            ])
        for bad in ["{ss}", "a{vs}", "a{s}", "a{sss}", "()", "(s", "a", "z", String(repeating: "a", count: 33) + "y"] {
            XCTAssertThrowsError(try DBusType.parse(signature: bad), bad)
        }
    }

    func testObjectPaths() {
        for good in ["/", "/org/freedesktop/secrets", "/a_b/C9"] { XCTAssertTrue(DBusReader.isObjectPath(good), good) }
        for bad in ["", "org", "/a/", "//a", "/a//b", "/a-b", "/é"] {
            XCTAssertFalse(DBusReader.isObjectPath(bad), bad)
        }
    }

    func testSessionBusAddresses() {
        let table: [(String, DBusAddress?)] = [
            ("unix:path=/run/user/1000/bus", .path("/run/user/1000/bus")),
            ("unix:path=/tmp/with%20space,guid=0123", .path("/tmp/with space")),
            ("unix:abstract=/tmp/dbus-AbC,guid=0123", .abstract(Array("/tmp/dbus-AbC".utf8))),
            ("unix:path=/a;tcp:host=localhost,port=1", .path("/a")),
            ("tcp:host=localhost,port=1;unix:path=/a", nil),
            ("unix:tmpdir=/tmp", nil),
            ("unix:path=relative", nil),
            ("unix:path=/a,abstract=/b", nil),
            ("unix:path=/bad%zz", nil),
            ("autolaunch:", nil),
            ("unix:path=/nul%00inside", nil),
        ]
        for (text, expected) in table {
            XCTAssertEqual(DBusAddress.parse(text), expected, text)
        }
        XCTAssertEqual(
            DBusAddress.sessionBus(environment: ["XDG_RUNTIME_DIR": "/run/user/7"]), .path("/run/user/7/bus"))
        XCTAssertNil(DBusAddress.sessionBus(environment: [:]))
    }

    /// Both sides of the exchange agree, and every secret is the prime's length, leading zero
    /// bytes kept (the specification's padding, which libsecret and gnome-keyring apply).
    func testTheKeyExchangeAgreesAndPadsToThePrimesLength() throws {
        try XCTSkipUnless(COpenSSLLoader.available, "libcrypto is not installed")
        let one = try DiffieHellmanGroup2.KeyPair()
        let other = try DiffieHellmanGroup2.KeyPair()
        XCTAssertEqual(one.publicKey.count, 128)
        XCTAssertNotEqual(one.publicKey, other.publicKey)
        let shared = try one.sharedSecret(peer: other.publicKey)
        XCTAssertEqual(shared, try other.sharedSecret(peer: one.publicKey))
        XCTAssertEqual(shared.count, 128)

        // With a private exponent of 3, the peer 2 gives 8: 127 zero bytes, then 8.
        let known = try DiffieHellmanGroup2.KeyPair(privateExponent: [3])
        XCTAssertEqual(known.publicKey, [UInt8](repeating: 0, count: 127) + [8])
        XCTAssertEqual(try known.sharedSecret(peer: [0, 0, 2]), [UInt8](repeating: 0, count: 127) + [8])
    }

    func testPeerKeysOutsideTheGroupAreRefused() throws {
        try XCTSkipUnless(COpenSSLLoader.available, "libcrypto is not installed")
        let pair = try DiffieHellmanGroup2.KeyPair()
        var pMinusOne = DiffieHellmanGroup2.prime
        pMinusOne[127] -= 1
        for bad in [[], [0], [1], [0, 1], pMinusOne, DiffieHellmanGroup2.prime, [1] + DiffieHellmanGroup2.prime] {
            XCTAssertThrowsError(try pair.sharedSecret(peer: bad), "\(bad.count) bytes")
        }
        var pMinusTwo = DiffieHellmanGroup2.prime
        pMinusTwo[127] -= 2
        XCTAssertNoThrow(try pair.sharedSecret(peer: pMinusTwo))
        XCTAssertNoThrow(try pair.sharedSecret(peer: [2]))
    }
}

enum COpenSSLLoader {
    static var available: Bool { (try? DiffieHellmanGroup2.KeyPair()) != nil }
}

// swift-tools-version:6.0
// authctl: a command-line client for Amazon Cognito user pools on Linux.
// Dependencies point one way: authctl (entry point, commands) -> AuthctlCore -> {LocalFormats,
// CognitoClient, SecureStore, SecurityKey};
// CognitoClient -> CCurl (libcurl) and COpenSSL (big integers); SecureStore -> CLibSecret, CKeyutils
// (keyctl system calls), COpenSSL (the Secret Service's key exchange) and swift-crypto (the age file
// format's primitives, the Secret Service's HKDF and AES);
// LocalFormats (what authctl keeps and hands out locally: config.toml's profiles, the session and
// pending-challenge records of the Secret Service, the otpauth URI and its QR code; pure parsing
// and encoding, never printing, exiting or ArgumentParser, so Fuzz/ can link it) -> CognitoClient,
// TOMLKit, CQRencode.
import PackageDescription

// Every target but the tests and the fuzzer uses FoundationEssentials, not the full Foundation
// (its ICU-based internationalisation and NSString/NSLock/JSONSerialization layer: ICU's 34 MB of
// data, 1,764 protocol conformances and 6 MiB of resident memory in a static binary;
// docs/performance.md). Their files import FoundationEssentials where it exists;
// MemberImportVisibility stops the full Foundation's extensions (String(format:),
// trimmingCharacters...) leaking in through another module's import, and
// Tests/integration/test_essentials.py checks the release binary has none of it.
let essentialsOnly: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

let package = Package(
    name: "authctl",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "authctl", targets: ["authctl"]),
        .library(name: "CognitoClient", targets: ["CognitoClient"]),
        .library(name: "SecureStore", targets: ["SecureStore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/attaswift/BigInt", from: "6.0.1"),
    ],
    targets: [
        // C shim over libcurl: curl_easy_setopt/getinfo are variadic, Swift cannot call them.
        // libcurl's headers only (no pkg-config, which would link it): CCurl loads it with dlopen
        // on the first request, so commands that make none do not load its 27 libraries.
        .systemLibrary(
            name: "CLibcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(
            name: "CCurl",
            dependencies: ["CLibcurl"]
        ),
        // C shim over libsecret-1, which it loads with dlopen on the first keyring call (not
        // linked: with GLib, GIO and libgcrypt it is 11 libraries), so commands that need no
        // keyring do not load it. It needs no libsecret headers to build (see CLibSecret.c).
        .target(name: "CLibSecret"),
        // add_key/keyctl system calls for the kernel-keyring store (syscall(2) is variadic, which
        // Swift cannot call); direct calls, so no libkeyutils is needed at run time.
        .target(name: "CKeyutils"),
        // OpenSSL's libcrypto for constant-speed big-integer arithmetic (BN_mod_exp) in SRP: a C
        // shim that loads it with dlopen on the first big-integer operation (not linked: only SRP
        // uses it, and loading it costs every start about 2.5 M instructions). OpenSSL's headers
        // are used for the types only.
        .target(name: "COpenSSL"),
        // C shim over libqrencode (QR codes for authenticator-app set-up, drawn in the terminal),
        // which it loads with dlopen when the first code is drawn (not linked: only MFA set-up
        // needs it); <qrencode.h> (libqrencode-dev) for types only.
        .target(name: "CQRencode"),
        // C shim over libfido2 (FIDO2 security keys, for passkeys), which it loads with dlopen on
        // the first key operation (not linked: with libcbor, libcrypto and libudev it is loaded
        // only by `passkey` and `signin --method passkey`); <fido.h> (libfido2-dev) for types only.
        // It also carries the `unix:PATH` device's socket I/O (fido_dev_set_io_functions).
        .target(name: "CFido2"),
        // FIDO2 security keys over CFido2: makeCredential and getAssertion, typed errors. Like the
        // other libraries it never prints, exits or imports ArgumentParser.
        .target(name: "SecurityKey", dependencies: ["CFido2"], swiftSettings: essentialsOnly),
        // prctl (variadic) and async-signal-safe signal deferral for the executable.
        .target(name: "CProcess"),
        .target(
            name: "CognitoClient",
            dependencies: [
                "CCurl",
                "COpenSSL",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: essentialsOnly
        ),
        .target(
            name: "LocalFormats",
            dependencies: [
                "CognitoClient",
                "CQRencode",
                .product(name: "TOMLKit", package: "TOMLKit"),
            ],
            swiftSettings: essentialsOnly
        ),
        .target(
            name: "SecureStore",
            dependencies: [
                "CLibSecret",
                "CKeyutils",
                // The Secret Service's Diffie-Hellman for direct reads (SecretServiceDirectRead).
                "COpenSSL",
                // scrypt, HKDF, HMAC and ChaCha20-Poly1305 for the age-format file store.
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: essentialsOnly
        ),
        // The core of the executable: the store owner and the session layer, the sign-in
        // pipeline, credentials, the operator's bulk runs, the console and output. It takes plain
        // values (never ArgumentParser), so the compiler keeps commands -> core, never back.
        .target(
            name: "AuthctlCore",
            dependencies: [
                "CognitoClient",
                "LocalFormats",
                "SecureStore",
                "SecurityKey",
                "CProcess",
            ],
            swiftSettings: essentialsOnly
        ),
        // The entry point and the commands (one file per subcommand, option groups): the only
        // target that imports ArgumentParser.
        .executableTarget(
            name: "authctl",
            dependencies: [
                "AuthctlCore",
                "CognitoClient",
                "LocalFormats",
                "SecureStore",
                "SecurityKey",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: essentialsOnly
        ),
        // `make fuzz`: libFuzzer targets over the libraries' parsers of outside data (Fuzz/).
        .executableTarget(
            name: "authctl-fuzz",
            dependencies: ["CognitoClient", "LocalFormats", "SecureStore", "AuthctlCore"],
            path: "Fuzz/Sources"
        ),
        // `make bench`: release-build timings written to docs/performance.md.
        .executableTarget(
            name: "authctl-bench",
            dependencies: ["CognitoClient"],
            swiftSettings: essentialsOnly
        ),
        .testTarget(
            name: "CognitoClientTests",
            dependencies: [
                "CognitoClient",
                // An independent big-integer implementation for the test-side SRP verifier.
                .product(name: "BigInt", package: "BigInt"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "LocalFormatsTests",
            dependencies: ["LocalFormats", "CognitoClient"]
        ),
        .testTarget(
            name: "SecureStoreTests",
            dependencies: ["SecureStore", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "authctlTests",
            dependencies: ["authctl", "AuthctlCore", "CognitoClient", "LocalFormats", "SecureStore", "SecurityKey"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// authctl-bench: times the SRP client math of one `authctl signin` (release build).
//
//     swift run -c release authctl-bench [--iterations N] [--warmup N]
//
// Prints a Markdown table (min / median / p90 in milliseconds) for docs/performance.md.
// A build without optimisation (`#if DEBUG`) warns loudly on stderr: its figures are meaningless.
// The spec's budget: SRP client math (A, x, u, S, HKDF) at most 5 ms on the 2-core machine.
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Writes `text` to standard error (FileHandle is in the full Foundation, which this target does not use).
func printError(_ text: String) {
    var bytes = Array(text.utf8)
    _ = write(2, &bytes, bytes.count)
}

let budgetMilliseconds = 5.0

if CommandLine.arguments.contains("--help") || CommandLine.arguments.contains("-h") {
    print(
        """
        usage: authctl-bench [--iterations N] [--warmup N]

        Times the SRP client math of one `authctl signin` (A, x, u, S, HKDF, signature) with
        OpenSSL BIGNUM and prints min / median / p90 in milliseconds as a Markdown table,
        with the 1-minute load average before and after. Build it with optimisation:
            swift build -c release --scratch-path .build-bench --product authctl-bench
            .build-bench/release/authctl-bench
        Defaults: 20 warm-up and 200 timed iterations per row.
        """)
    exit(0)
}

#if DEBUG
/// A debug build (-Onone) times unoptimised Swift: its figures say nothing about the budget.
let buildKind = "DEBUG build (unoptimised: figures are meaningless)"
printError(
    """
    ************************************************************************
    authctl-bench: WARNING: this is a DEBUG build, compiled without optimisation.
    Its timings are meaningless for the 5 ms budget; do not record them.
    Build and run it in release mode instead:
        swift build -c release --scratch-path .build-bench --product authctl-bench
        .build-bench/release/authctl-bench
    ************************************************************************

    """)
#else
let buildKind = "release build"
#endif

func option(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count,
        let parsed = Int(arguments[index + 1]), parsed > 0
    else { return value }
    return parsed
}

let iterations = option("--iterations", default: 200)
let warmup = option("--warmup", default: 20)

func randomHex(bytes count: Int) -> String {
    var rng = SystemRandomNumberGenerator()
    return (0..<count).map { _ in
        let byte = UInt8.random(in: 0...255, using: &rng)
        return (byte < 16 ? "0" : "") + String(byte, radix: 16)
    }.joined()
}

func randomBase64(bytes count: Int) -> String {
    var rng = SystemRandomNumberGenerator()
    return Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }).base64EncodedString()
}

struct Stats {
    let name: String
    let samples: [Double]  // milliseconds, sorted

    init(name: String, samples: [Double]) {
        self.name = name
        self.samples = samples.sorted()
    }

    var min: Double { samples[0] }
    var median: Double {
        let mid = samples.count / 2
        return samples.count % 2 == 1 ? samples[mid] : (samples[mid - 1] + samples[mid]) / 2
    }
    /// Nearest-rank 90th percentile.
    var p90: Double { samples[Swift.max(0, Int((0.9 * Double(samples.count)).rounded(.up)) - 1)] }
}

func milliseconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) * 1000 + Double(parts.attoseconds) / 1e15
}

/// Runs `body` `warmup` times untimed, then `iterations` times timed one by one.
func measure(_ name: String, _ body: () throws -> Int) rethrows -> (Stats, Int) {
    var sink = 0
    for _ in 0..<warmup { sink &+= try body() }
    let clock = ContinuousClock()
    var samples = [Double]()
    samples.reserveCapacity(iterations)
    for _ in 0..<iterations {
        var result = 0
        let elapsed = try clock.measure { result = try body() }
        sink &+= result
        samples.append(milliseconds(elapsed))
    }
    return (Stats(name: name, samples: samples), sink)
}

func cpuModel() -> String {
    guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8) else { return "unknown" }
    for line in info.split(separator: "\n") where line.hasPrefix("model name") {
        if let colon = line.firstIndex(of: ":") {
            return String(line[line.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" }))
        }
    }
    return "unknown"
}

/// The 1-minute load average: timings on a busy machine are not comparable.
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8),
        let first = text.split(separator: " ").first
    else { return "unknown" }
    return String(first)
}

let loadBefore = loadAverage()

do {
    let pool = "eu-west-1_AbCdEf123"
    let userId = "3f9c0d5e-8a71-4c2b-9d4e-6b5a7c8d9e0f"
    let password = "correct horse battery staple"
    // A realistic SRP_B: g^b mod N for a random b, i.e. another client's A.
    let srpB = try SRPClient(userPoolId: pool).srpAHex
    let salt = randomHex(bytes: 16)
    let secretBlock = randomBase64(bytes: 1024)
    let timestamp = SRPTimestamp.string(for: Date())

    let (keyGen, sink1) = try measure("A = g^a mod N (random a; one 3072-bit modexp, 256-bit exponent)") {
        try SRPClient(userPoolId: pool).srpAHex.utf8.count
    }
    let client = try SRPClient(userPoolId: pool)
    let (answer, sink2) = try measure("u, x, S, HKDF, signature (PASSWORD_VERIFIER answer)") {
        try client.passwordClaimSignature(
            userIdForSRP: userId, password: password, saltHex: salt, srpBHex: srpB,
            secretBlock: secretBlock, timestamp: timestamp
        ).utf8.count
    }
    let (whole, sink3) = try measure("whole client SRP per sign-in (A, x, u, S, HKDF, signature)") {
        let fresh = try SRPClient(userPoolId: pool)
        return try fresh.passwordClaimSignature(
            userIdForSRP: userId, password: password, saltHex: salt, srpBHex: srpB,
            secretBlock: secretBlock, timestamp: timestamp
        ).utf8.count + fresh.srpAHex.utf8.count
    }

    /// Three decimals (String(format:) is in the full Foundation, which this target does not use).
    func format(_ value: Double) -> String {
        let thousandths = Int((value * 1000).rounded())
        let fraction = String(thousandths % 1000)
        return "\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }
    print("authctl-bench: SRP client math, OpenSSL BIGNUM, \(buildKind)")
    print(
        "machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpuModel()); "
            + "load average \(loadBefore) before, \(loadAverage()) after; "
            + "\(warmup) warm-up + \(iterations) timed iterations each")
    print("")
    print("| measurement | min (ms) | median (ms) | p90 (ms) |")
    print("|---|---:|---:|---:|")
    for stats in [keyGen, answer, whole] {
        print("| \(stats.name) | \(format(stats.min)) | \(format(stats.median)) | \(format(stats.p90)) |")
    }
    print("")
    let verdict = whole.median <= budgetMilliseconds ? "within" : "OVER"
    print(
        "budget: whole client SRP median \(format(whole.median)) ms \(verdict) the \(format(budgetMilliseconds)) ms budget"
            + " (checksum \(sink1 &+ sink2 &+ sink3))")
} catch {
    printError("authctl-bench: \(error)\n")
    exit(1)
}

import Foundation

// Built with -DFUZZING and -sanitize=fuzzer (make fuzz): libFuzzer's entry point; the target is
// chosen by AUTHCTL_FUZZ_TARGET. Otherwise (swift build): a replayer of corpus files, so every
// build checks that the targets still compile and that the committed corpus passes.
#if FUZZING
private let target: @Sendable (Data) -> Void = {
    let name = ProcessInfo.processInfo.environment["AUTHCTL_FUZZ_TARGET"] ?? ""
    guard let run = FuzzTargets.all[name] else {
        FileHandle.standardError.write(
            Data("AUTHCTL_FUZZ_TARGET must be one of \(FuzzTargets.all.keys.sorted())\n".utf8))
        exit(2)
    }
    return run
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    target(Data(bytes: bytes, count: count))
    return 0
}
#else
@main
struct Replay {
    /// `authctl-fuzz TARGET FILE...`: runs the target on each file.
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let run = FuzzTargets.all[name] else {
            FileHandle.standardError.write(
                Data("usage: authctl-fuzz \(FuzzTargets.all.keys.sorted().joined(separator: "|")) FILE...\n".utf8))
            exit(64)
        }
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            run(data)
        }
    }
}
#endif

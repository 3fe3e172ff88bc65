// swift-tools-version:6.0
// The yardstick of `authctl --version` in `make bench`: the smallest Swift program that uses
// FoundationEssentials, built the way `make bench` builds authctl (release, static Swift runtime).
import PackageDescription

let package = Package(
    name: "bench-hello",
    targets: [.executableTarget(name: "hello")]
)

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Hosts that name this machine. Plain `http://` is allowed only to them (a local emulator), and
/// requests to them never go through a proxy.
public enum Loopback {
    /// `localhost`, `*.localhost`, `::1` (bracketed or not) and 127.0.0.0/8.
    public static func isLoopbackHost(_ host: String) -> Bool {
        let bare = host.trimmed(where: { $0 == "[" || $0 == "]" }).lowercased()
        let octets = bare.split(separator: ".", omittingEmptySubsequences: false).map { UInt8($0) }
        let loopbackIPv4 = octets.count == 4 && !octets.contains(nil) && octets[0] == 127
        return bare == "localhost" || bare.hasSuffix(".localhost") || bare == "::1" || loopbackIPv4
    }

    /// Whether `url` is a URL whose host is this machine.
    public static func isLoopbackURL(_ url: String) -> Bool {
        guard let host = URLComponents(string: url)?.host, !host.isEmpty else { return false }
        return isLoopbackHost(host)
    }
}

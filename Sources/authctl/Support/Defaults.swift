#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one place for defaults derived when nothing is configured: the profile name, a pool's
/// region and Cognito's endpoint in it.
enum Defaults {
    static let profile = "default"
    /// Where a region cannot be told from anything (no pool id either).
    static let region = "us-east-1"

    /// `--profile`, else AUTHCTL_PROFILE, else `default`; an empty value counts as unset.
    static func profileName(option: String?, environment: [String: String]) -> String {
        [option, environment["AUTHCTL_PROFILE"]].compactMap { $0 }.first { !$0.isEmpty } ?? profile
    }

    /// The configured region, else the pool id's own, else us-east-1.
    static func region(configured: String?, poolId: String) -> String {
        configured ?? Settings.region(fromPoolId: poolId) ?? region
    }

    /// The configured endpoint, else Cognito's public one in `region`.
    static func endpoint(configured: String?, region: String) -> String {
        configured ?? Settings.defaultEndpoint(region: region)
    }
}

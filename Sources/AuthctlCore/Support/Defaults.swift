#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one place for defaults derived when nothing is configured: the profile name, a pool's
/// region and Cognito's endpoint in it.
package enum Defaults {
    package static let profile = "default"
    /// Where a region cannot be told from anything (no pool id either).
    package static let region = "us-east-1"

    /// `--profile`, else AUTHCTL_PROFILE, else `default`; an empty value counts as unset.
    package static func profileName(option: String?, environment: [String: String]) -> String {
        [option, environment["AUTHCTL_PROFILE"]].compactMap { $0 }.first { !$0.isEmpty } ?? profile
    }

    /// The configured region, else the pool id's own, else us-east-1.
    package static func region(configured: String?, poolId: String) -> String {
        configured ?? Settings.region(fromPoolId: poolId) ?? region
    }

    /// The configured endpoint, else Cognito's public one in `region`.
    package static func endpoint(configured: String?, region: String) -> String {
        configured ?? Settings.defaultEndpoint(region: region)
    }
}

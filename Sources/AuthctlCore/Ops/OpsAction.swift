import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an ops command does to each user: AdminUserGlobalSignOut, then with `--disable`
/// AdminDisableUser. The one place these calls are made for a user (`signout --global --user`
/// makes its call here too). `contain` is a sequence of steps (Containment), each recorded.
package enum OpsAction: String, Codable {
    case signOut = "signout"
    case signOutAndDisable = "signout-disable"
    case contain = "contain"

    /// The user-update calls each user costs (contain: at least; Containment counts its own).
    package var callsPerUser: Int { self == .signOut ? 1 : 2 }

    /// In the audit log and the summary.
    package var auditName: String {
        switch self {
        case .signOut: return "signOut"
        case .signOutAndDisable: return "signOut+disable"
        case .contain: return "contain"
        }
    }

    /// The result when every call went through.
    package var success: OpsResult { self == .signOut ? .signedOut : .disabled }

    /// Runs the action's calls for `username`, each through `call` (which paces and retries).
    package func perform(
        on service: CognitoService, poolId: String, username: String,
        call: (() throws -> Void) throws -> Void = { try $0() }
    ) throws {
        try call { try service.adminUserGlobalSignOut(userPoolId: poolId, username: username) }
        if self == .signOutAndDisable {
            try call { try service.adminDisableUser(userPoolId: poolId, username: username) }
        }
    }
}

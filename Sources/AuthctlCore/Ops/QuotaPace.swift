import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The default pace of a bulk command's calls: a fraction of the account's provisioned limit for
/// each quota category (GetProvisionedLimit), or today's defaults where it cannot say.
package struct QuotaPace: Equatable {
    package enum Category: String, CaseIterable {
        case userUpdate = "UserUpdate"
        case userList = "UserList"
        case userRead = "UserRead"

        /// The service's documented default quota (requests a second) and this client's default
        /// pace under it when the provisioned limit is unknown.
        var documented: (quota: Double, pace: Double) {
            switch self {
            case .userUpdate: return (25, 20)
            case .userList: return (30, 25)
            case .userRead: return (120, 100)
            }
        }
    }

    /// The share of the provisioned limit a bulk run takes: the rest is left to the account's
    /// other traffic (sign-ins, the applications' own admin calls).
    package static let fraction = 0.8

    package var rate: Double
    /// For the plan: where the rate comes from.
    package var origin: String

    /// `explicit` when given; else `fraction` of what GetProvisionedLimit says for `category`; else
    /// the default, said to be assumed.
    package static func resolve(_ category: Category, explicit: Double?, service: CognitoService) -> QuotaPace {
        if let explicit { return QuotaPace(rate: explicit, origin: "as asked") }
        let limit = try? service.provisionedLimit(category: category.rawValue)
        if let limit, limit > 0 {
            let rate = max(1, (Double(limit) * fraction).rounded(.down))
            return QuotaPace(
                rate: rate,
                origin:
                    "\(Int(fraction * 100))% of the account's provisioned \(category.rawValue) limit, \(limit) a second"
            )
        }
        return QuotaPace(
            rate: category.documented.pace,
            origin:
                "assumed: GetProvisionedLimit did not say; the documented \(category.rawValue) quota is \(Int(category.documented.quota)) a second"
        )
    }
}

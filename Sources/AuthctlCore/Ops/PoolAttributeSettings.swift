import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whether the pool keeps an email or phone number's old value until the new one is verified
/// (UserAttributeUpdateSettings, "keep original attribute value active when an update is
/// pending"). A user's own session cannot read it: DescribeUserPool needs AWS credentials, so it
/// is asked only when the environment or the shared credentials file has some, and is unknown
/// otherwise (or when they are refused).
package enum PoolAttributeSettings {
    package enum Answer: Equatable {
        /// The attributes whose change waits for verification.
        case known(keptUntilVerified: Set<String>)
        case unknown(reason: String)

        package func keeps(_ attribute: VerifiableAttribute) -> Bool? {
            if case .known(let kept) = self { return kept.contains(attribute.rawValue) }
            return nil
        }
    }

    package static func read(settings: Settings, context: CommandContext) -> Answer {
        let admin: AdminService
        do {
            admin = try AdminService(context: context)
        } catch {
            return .unknown(reason: "reading it needs AWS credentials allowed cognito-idp:DescribeUserPool")
        }
        do {
            let pool = try admin.service.describeUserPool(userPoolId: admin.poolId).userPool
            return .known(
                keptUntilVerified: Set(
                    pool.userAttributeUpdateSettings?.attributesRequireVerificationBeforeUpdate ?? []))
        } catch let error as CognitoError {
            return .unknown(reason: "DescribeUserPool was refused: \(UntrustedText(error.errorType ?? error.message))")
        } catch {
            return .unknown(reason: "DescribeUserPool failed: \(AuthctlError.from(error).message)")
        }
    }
}

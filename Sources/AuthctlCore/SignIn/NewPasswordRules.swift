#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Checks on a new password that need no server; the pool's own policy is the service's to enforce.
package enum NewPasswordRules {
    package static func check(_ password: String, current: String?) throws {
        if password.isEmpty {
            throw AuthctlError(.inputRejected, "The new password is empty")
        }
        if password.first?.isWhitespace == true || password.last?.isWhitespace == true {
            throw AuthctlError(.inputRejected, "The new password must not begin or end with white space")
        }
        if let current, password == current {
            throw AuthctlError(.inputRejected, "The new password must differ from the current one")
        }
    }
}

/// An error raised while computing Cognito's SRP values.
///
/// `code` is stable and meant for matching; `message` is a sentence for a person.
public struct SRPError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable {
        /// The user pool id has no `_` separating the region from the pool name.
        case invalidUserPoolId
        /// SRP_B from the service is 0 mod N (B = 0, B = N, ...): continuing would leak nothing
        /// useful but would let a fake server fix the session key.
        case invalidServerB
        /// u = H(A | B) came out as zero.
        case zeroU
        /// SECRET_BLOCK from the service is not valid base64.
        case invalidSecretBlock
        /// SALT or SRP_B from the service is not a hexadecimal number.
        case invalidHex
        /// OpenSSL could not allocate or compute (out of memory).
        case arithmeticFailure
        /// OpenSSL's libcrypto, which does the arithmetic, cannot be loaded.
        case libraryUnavailable
        /// A remembered device's DeviceKey or DeviceGroupKey is empty.
        case invalidDeviceKey
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    public static let invalidServerB = SRPError(
        code: .invalidServerB,
        message: "the service sent an invalid SRP_B value (B mod N is zero)")
    public static let zeroU = SRPError(
        code: .zeroU,
        message: "the SRP scrambling parameter u = H(A, B) is zero")
    public static let invalidSecretBlock = SRPError(
        code: .invalidSecretBlock,
        message: "the service sent a SECRET_BLOCK that is not valid base64")
    public static let arithmeticFailure = SRPError(
        code: .arithmeticFailure,
        message: "big-integer arithmetic failed in OpenSSL (out of memory?)")

    public static func invalidHex(_ name: String) -> SRPError {
        SRPError(code: .invalidHex, message: "the service sent a \(name) value that is not hexadecimal")
    }

    public static func invalidUserPoolId(_ id: String) -> SRPError {
        SRPError(
            code: .invalidUserPoolId,
            message: "invalid user pool id \"\(id)\": expected <region>_<pool name>, e.g. eu-west-1_AbCdEf123")
    }
}

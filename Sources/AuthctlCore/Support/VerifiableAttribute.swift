/// The attributes that verify an address: an email or a phone number.
package enum VerifiableAttribute: String, CaseIterable, Codable {
    case email
    case phoneNumber = "phone_number"

    package var words: String { self == .email ? "email address" : "phone number" }
    /// `email_verified`, `phone_number_verified`.
    package var verifiedFlag: String { rawValue + "_verified" }
}

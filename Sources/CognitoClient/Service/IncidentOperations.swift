#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The IAM-signed operations of incident response (`ops investigate`, `ops contain`, `ops restore`):
// reading a user's account, factors, groups and sign-in events, and resetting what lets someone
// in. Shapes from Cognito's service model (botocore cognito-idp 1.44.8); only the members authctl
// uses are decoded, every string from the service is the caller's to escape.

/// AdminGetUser's answer: the account as the service keeps it.
public struct AdminUser: Decodable, Sendable, Equatable {
    public var username: String?
    public var userStatus: String?
    public var enabled: Bool?
    public var userCreateDate: Double?
    public var userLastModifiedDate: Double?
    public var userAttributes: [AttributeType]?
    public var userMFASettingList: [String]?
    public var preferredMfaSetting: String?

    public init(username: String?, userStatus: String? = nil, enabled: Bool? = nil) {
        self.username = username
        self.userStatus = userStatus
        self.enabled = enabled
    }

    public func attribute(_ name: String) -> String? { userAttributes?.first { $0.name == name }?.value }

    /// A channel AdminResetUserPassword can send its code to: a verified email or phone number.
    public var hasVerifiedChannel: Bool {
        (attribute("email_verified") == "true" && attribute("email") != nil)
            || (attribute("phone_number_verified") == "true" && attribute("phone_number") != nil)
    }

    /// The user must set a new password before the next sign-in.
    public var awaitsNewPassword: Bool { userStatus == "RESET_REQUIRED" || userStatus == "FORCE_CHANGE_PASSWORD" }
}

/// AdminGetUserAuthFactors: the factors a user has configured.
public struct UserAuthFactors: Decodable, Sendable, Equatable {
    public var preferredMfaSetting: String?
    public var userMFASettingList: [String]?
    /// AuthFactorType: PASSWORD, EMAIL_OTP, SMS_OTP, WEB_AUTHN, SOFTWARE_TOKEN (MFA only).
    public var configuredUserAuthFactors: [String]?

    public init(configuredUserAuthFactors: [String]?, userMFASettingList: [String]? = nil) {
        self.configuredUserAuthFactors = configuredUserAuthFactors
        self.userMFASettingList = userMFASettingList
    }
}

struct PagedUserRequest: Encodable {
    var userPoolId: String
    var username: String
    var limit: Int?
    var maxResults: Int?
    var nextToken: String?
}

struct GroupsPage: Decodable {
    struct Group: Decodable { var groupName: String? }
    var groups: [Group]?
    var nextToken: String?
}

/// AuthEventType: one sign-in event, as threat protection recorded it.
public struct AuthEvent: Decodable, Sendable, Equatable {
    public var eventId: String?
    public var eventType: String?
    public var creationDate: Double?
    public var eventResponse: String?
    public var eventRisk: Risk?
    public var eventContextData: Context?
    public var eventFeedback: Feedback?

    public struct Risk: Decodable, Sendable, Equatable {
        public var riskDecision: String?
        public var riskLevel: String?
        public var compromisedCredentialsDetected: Bool?
    }

    public struct Context: Decodable, Sendable, Equatable {
        public var ipAddress: String?
        public var deviceName: String?
        public var city: String?
        public var country: String?
    }

    public struct Feedback: Decodable, Sendable, Equatable {
        public var feedbackValue: String?
    }
}

struct AuthEventsPage: Decodable {
    var authEvents: [AuthEvent]?
    var nextToken: String?
}

struct FeedbackRequest: Encodable {
    var userPoolId: String
    var username: String
    var eventId: String
    var feedbackValue: String
}

struct MFAOffRequest: Encodable {
    struct Off: Encodable {
        var enabled = false
        var preferredMfa = false
    }
    var userPoolId: String
    var username: String
    var sMSMfaSettings = Off()
    var softwareTokenMfaSettings = Off()
    var emailMfaSettings = Off()

    enum CodingKeys: String, CodingKey {
        case userPoolId, username, softwareTokenMfaSettings, emailMfaSettings
        case sMSMfaSettings = "SMSMfaSettings"
    }
}

struct SetPasswordRequest: Encodable {
    var userPoolId: String
    var username: String
    var password: String
    var permanent: Bool
}

struct ProvisionedLimitRequest: Encodable {
    struct Definition: Encodable {
        var limitClass = "API_CATEGORY"
        var attributes: [String: String]
    }
    var limitDefinition: Definition
}

struct ProvisionedLimitResponse: Decodable {
    struct Limit: Decodable { var provisionedLimitValue: Int? }
    var limit: Limit?
}

struct ClientsPage: Decodable {
    var userPoolClients: [Client]?
    var nextToken: String?
    struct Client: Decodable { var clientId: String? }
}

struct ClientsRequest: Encodable {
    var userPoolId: String
    var maxResults = 60
    var nextToken: String?
}

struct ClientSecretRequest: Encodable {
    var userPoolId: String
    var clientId: String
    var clientSecretId: String?
    var nextToken: String?
}

/// ClientSecretDescriptorType: one of an app client's secrets. The value comes only in
/// AddUserPoolClientSecret's answer, for a secret the service made.
public struct ClientSecretDescriptor: Decodable, Sendable {
    public var clientSecretId: String?
    public var clientSecretValue: String?
    public var clientSecretCreateDate: Double?
}

struct AddSecretResponse: Decodable { var clientSecretDescriptor: ClientSecretDescriptor? }
struct SecretsPage: Decodable {
    var clientSecrets: [ClientSecretDescriptor]?
    var nextToken: String?
}

extension CognitoService {
    private func admin<Response: Decodable>(_ operation: String, _ request: some Encodable, idempotent: Bool)
        throws -> Response
    {
        try call(operation, request, idempotent: idempotent)
    }

    private func adminChange(_ operation: String, _ request: some Encodable, idempotent: Bool = true) throws {
        _ = try call(operation, request, idempotent: idempotent, as: EmptyResponse.self)
    }

    /// AdminGetUser. Read-only, so retried.
    public func adminGetUser(userPoolId: String, username: String) throws -> AdminUser {
        try admin("AdminGetUser", AdminUserRequest(userPoolId: userPoolId, username: username), idempotent: true)
    }

    /// AdminGetUserAuthFactors. Read-only.
    public func adminGetUserAuthFactors(userPoolId: String, username: String) throws -> UserAuthFactors {
        try admin(
            "AdminGetUserAuthFactors", AdminUserRequest(userPoolId: userPoolId, username: username), idempotent: true)
    }

    /// AdminListGroupsForUser, every page (at most `maximum` names).
    public func adminListGroupsForUser(userPoolId: String, username: String, maximum: Int = 500) throws -> [String] {
        try everyPage(maximum: maximum) { token in
            let page: GroupsPage = try admin(
                "AdminListGroupsForUser",
                PagedUserRequest(userPoolId: userPoolId, username: username, limit: 60, nextToken: token),
                idempotent: true)
            return ((page.groups ?? []).compactMap(\.groupName), page.nextToken)
        }
    }

    /// AdminListUserAuthEvents, newest first, page by page until `keep` says stop (an event older
    /// than wanted) or `maximum` events are read: a hostile or huge history stays bounded.
    public func adminListUserAuthEvents(
        userPoolId: String, username: String, maximum: Int, keep: (AuthEvent) -> Bool = { _ in true }
    ) throws -> (events: [AuthEvent], truncated: Bool) {
        var events: [AuthEvent] = []
        var token: String?
        var seen = Set<String>()
        repeat {
            let page: AuthEventsPage = try admin(
                "AdminListUserAuthEvents",
                PagedUserRequest(userPoolId: userPoolId, username: username, maxResults: 60, nextToken: token),
                idempotent: true)
            for event in page.authEvents ?? [] {
                guard keep(event) else { return (events, false) }
                guard events.count < maximum else { return (events, true) }
                events.append(event)
            }
            token = page.nextToken.flatMap { $0.isEmpty || seen.contains($0) ? nil : $0 }
            if let token { seen.insert(token) }
        } while token != nil
        return (events, false)
    }

    /// AdminUpdateAuthEventFeedback `Invalid` (or `Valid`): tells threat protection whether the
    /// event was the user's. Setting it twice is harmless.
    public func adminUpdateAuthEventFeedback(userPoolId: String, username: String, eventId: String, valid: Bool)
        throws
    {
        try adminChange(
            "AdminUpdateAuthEventFeedback",
            FeedbackRequest(
                userPoolId: userPoolId, username: username, eventId: eventId, feedbackValue: valid ? "Valid" : "Invalid"
            ))
    }

    /// AdminDeleteSoftwareToken: the user's authenticator app stops answering for it.
    public func adminDeleteSoftwareToken(userPoolId: String, username: String) throws {
        try adminChange("AdminDeleteSoftwareToken", AdminUserRequest(userPoolId: userPoolId, username: username))
    }

    /// AdminSetUserMFAPreference with every factor off and none preferred.
    public func adminTurnOffMFA(userPoolId: String, username: String) throws {
        try adminChange("AdminSetUserMFAPreference", MFAOffRequest(userPoolId: userPoolId, username: username))
    }

    /// AdminResetUserPassword: the password stops working; a code goes to a verified channel.
    /// Not repeated after an unknown outcome (a second code replaces the first).
    public func adminResetUserPassword(userPoolId: String, username: String) throws {
        try adminChange(
            "AdminResetUserPassword", AdminUserRequest(userPoolId: userPoolId, username: username), idempotent: false)
    }

    /// AdminSetUserPassword: `permanent` false makes it a temporary password to change at sign-in.
    public func adminSetUserPassword(userPoolId: String, username: String, password: String, permanent: Bool) throws {
        try adminChange(
            "AdminSetUserPassword",
            SetPasswordRequest(userPoolId: userPoolId, username: username, password: password, permanent: permanent))
    }

    /// AdminEnableUser. Repeating it is harmless.
    public func adminEnableUser(userPoolId: String, username: String) throws {
        try adminChange("AdminEnableUser", AdminUserRequest(userPoolId: userPoolId, username: username))
    }

    /// GetProvisionedLimit for an API category (`UserUpdate`, `UserRead`, ...): requests a second.
    public func provisionedLimit(category: String) throws -> Int? {
        let answer: ProvisionedLimitResponse = try admin(
            "GetProvisionedLimit",
            ProvisionedLimitRequest(limitDefinition: .init(attributes: ["Category": category])), idempotent: true)
        return answer.limit?.provisionedLimitValue
    }

    /// ListUserPoolClients, every page: the pool's app client ids (at most `maximum`).
    public func listUserPoolClientIds(userPoolId: String, maximum: Int = 1000) throws -> [String] {
        try everyPage(maximum: maximum) { token in
            let page: ClientsPage = try admin(
                "ListUserPoolClients", ClientsRequest(userPoolId: userPoolId, nextToken: token), idempotent: true)
            return ((page.userPoolClients ?? []).compactMap(\.clientId), page.nextToken)
        }
    }

    /// AddUserPoolClientSecret, a secret the service makes: its descriptor, value included (once).
    public func addUserPoolClientSecret(userPoolId: String, clientId: String) throws -> ClientSecretDescriptor? {
        let answer: AddSecretResponse = try admin(
            "AddUserPoolClientSecret", ClientSecretRequest(userPoolId: userPoolId, clientId: clientId),
            idempotent: false)
        return answer.clientSecretDescriptor
    }

    /// ListUserPoolClientSecrets: the client's secrets (ids and dates, never values).
    public func listUserPoolClientSecrets(userPoolId: String, clientId: String) throws -> [ClientSecretDescriptor] {
        try everyPage { token in
            let page: SecretsPage = try admin(
                "ListUserPoolClientSecrets",
                ClientSecretRequest(userPoolId: userPoolId, clientId: clientId, nextToken: token), idempotent: true)
            return (page.clientSecrets ?? [], page.nextToken)
        }
    }

    /// DeleteUserPoolClientSecret: that secret stops working (the client's last one cannot go).
    public func deleteUserPoolClientSecret(userPoolId: String, clientId: String, secretId: String) throws {
        try adminChange(
            "DeleteUserPoolClientSecret",
            ClientSecretRequest(userPoolId: userPoolId, clientId: clientId, clientSecretId: secretId))
    }
}

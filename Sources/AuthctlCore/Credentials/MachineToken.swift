import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// `--client-credentials`'s choices (the executable's MachineTokenOptions, as plain values).
package struct MachineTokenChoice {
    package var scopes: [String] = []
    package var noStore = false
    package var managedLogin = ManagedLoginChoice()

    package init(
        scopes: [String] = [],
        noStore: Bool = false,
        managedLogin: ManagedLoginChoice = ManagedLoginChoice()
    ) {
        self.scopes = scopes
        self.noStore = noStore
        self.managedLogin = managedLogin
    }
}

/// A client_credentials access token as cached (a kept record: `ProfileStore.machineTokens`) and
/// printed (text: the token alone).
package struct MachineToken: Codable, Equatable, CommandReport {
    package var accessToken: String
    package var expiresAt: Date
    package var scope: String
    package var tokenType: String

    package var textOutput: [String] { [accessToken] }
}

/// Gets client_credentials tokens, from the profile's cache while they stay valid long enough.
/// The cache is one Secret Service item per profile and app client, holding one token per scope set.
package struct MachineTokens {
    /// The profile's session service: its settings, store and transport.
    package let session: ProfileSession
    private var context: CommandContext { session.context }
    private var settings: Settings { session.settings }
    package let options: MachineTokenChoice

    package func token(minValidity: Double) throws -> MachineToken {
        let clientId = try settings.checkedClientId()
        // Without a managed-login domain the user-pool API issues it (GetClientToken); with one,
        // its token endpoint, unless the profile says `machine_tokens = "api"` (a domain kept for
        // browser sign-ins) and no --domain names one for this call.
        let namedDomain = !(options.managedLogin.domain ?? "").isEmpty
        let hasDomain = namedDomain || (settings.domain != nil && !settings.machineTokensFromAPI)
        let domain = hasDomain ? try options.managedLogin.resolve(settings) : nil
        let scopes = ScopeList.normalized(options.scopes)
        // Keyed by everything that makes the answer: the domain (or API endpoint) that issued it
        // and the scopes (one domain's token was handed out for another's).
        let issuer = try domain?.base ?? "api " + session.client.endpoint
        let scopeKey = issuer + " " + scopes.sorted().joined(separator: " ")
        let sessions = session
        if options.noStore {
            // No keyring needed: the secret from the environment, or the keyring when one answers.
            let secret = try sessions.clientSecret(clientId: clientId, storeRequired: false)
            return try request(domain: domain, clientId: clientId, secret: secret, scopes: scopes)
        }
        let secret = try sessions.clientSecret(clientId: clientId)
        let store = session.store
        // Under the cache's own lock: jobs started together on an empty cache make one request.
        return try store.locked(.machineTokens) {
            var cache = try store.machineTokens(clientId: clientId)
            let now = context.now()
            if let cached = cache[scopeKey], cached.expiresAt.timeIntervalSince(now) > minValidity {
                context.trace?.record(.cache(.machineToken, hit: true))
                return cached
            }
            context.trace?.record(.cache(.machineToken, hit: false))
            let fresh = try request(domain: domain, clientId: clientId, secret: secret, scopes: scopes)
            cache = cache.filter { $0.value.expiresAt > now }
            cache[scopeKey] = fresh
            do {
                try store.keep(machineTokens: cache, userPoolId: settings.userPoolId ?? "", clientId: clientId)
            } catch {
                context.console.message(
                    "authctl: warning: the token could not be cached (\(AuthctlError.from(error).message)); the next call asks again."
                )
            }
            return fresh
        }
    }

    private func request(domain: ManagedLoginDomain?, clientId: String, secret: String?, scopes: [String]) throws
        -> MachineToken
    {
        guard let secret else {
            throw AuthctlError(
                .configuration,
                """
                --client-credentials needs the app client's secret: set AUTHCTL_CLIENT_SECRET, or keep it with \
                `authctl configure --client-secret-stdin` (profile \(settings.profile))
                """)
        }
        guard let domain else { return try fromAPI(clientId: clientId, secret: secret, scopes: scopes) }
        let endpoint = TokenEndpoint(
            domain: domain, transport: try context.transport(),
            client: AppClient(userPoolId: settings.userPoolId ?? "", clientId: clientId, clientSecret: secret))
        let tokens: OAuthTokens
        do {
            tokens = try endpoint.clientCredentials(scopes: scopes)
        } catch let error as OAuthError {
            // The client-credentials grant exists at the managed login only: no API call to fail over to.
            throw Failover.managedLoginFailure(error, domain: domain.base, settings: settings)
        }
        let claims = try? JWTClaims(token: tokens.accessToken)
        let now = context.now()
        let expiresAt = tokens.expiry(now: now)
        return MachineToken(
            accessToken: tokens.accessToken, expiresAt: expiresAt,
            scope: tokens.scope ?? claims?.string("scope") ?? scopes.joined(separator: " "),
            tokenType: tokens.tokenType ?? "Bearer")
    }

    /// GetClientToken: for an app client whose only flow is ALLOW_CLIENT_TOKEN_AUTH (no domain needed).
    private func fromAPI(clientId: String, secret: String, scopes: [String]) throws -> MachineToken {
        let client = try session.client
        let service = try context.service(client: client)
        let answer: ClientAuthenticationResult
        do {
            answer = try service.getClientToken(clientId: clientId, secret: secret, scopes: scopes)
        } catch let error as CognitoError where error.refusal == .clientTokenAuthNotAllowed {
            throw AuthctlError(
                .configuration,
                """
                this app client cannot get machine tokens through the API: ALLOW_CLIENT_TOKEN_AUTH must be its only \
                flow (an administrator sets it), or configure the managed-login domain for the client_credentials \
                grant (--domain, authctl configure --domain URL) (Cognito: \(UntrustedText(error.message)))
                """)
        } catch let error as CognitoError {
            throw AuthctlError.from(error, endpoint: client.endpoint)
        }
        let token = answer.accessToken ?? ""
        let claims = try? JWTClaims(token: token)
        return MachineToken(
            accessToken: token,
            expiresAt: OutsideNumbers.expiry(ofAccessToken: token, expiresIn: answer.expiresIn, now: context.now()),
            scope: claims?.string("scope") ?? scopes.joined(separator: " "), tokenType: answer.tokenType ?? "Bearer")
    }

    package init(session: ProfileSession, options: MachineTokenChoice) {
        self.session = session
        self.options = options
    }
}

import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
import LocalFormats
#endif

/// `signin --browser`'s choices (the executable's BrowserSignInOptions, as plain values).
package struct BrowserSignInChoice {
    package var noBrowser = false
    package var identityProvider: String?
    package var prompt: String?
    package var scopes: [String] = []
    package var redirectPort: Int?
    package var browserTimeout: Double = 180
    package var managedLogin = ManagedLoginChoice()

    package static let defaultScopes = ["openid", "email", "profile", "aws.cognito.signin.user.admin"]
    package static let defaultRedirectPort = 8400

    /// --redirect-port, else the profile's redirect_port, else 8400.
    package func port(_ settings: Settings) throws -> UInt16 {
        if let redirectPort { return UInt16(redirectPort) }
        guard let configured = settings.redirectPort else { return UInt16(Self.defaultRedirectPort) }
        guard let port = UInt16(configured), port > 0 else {
            throw AuthctlError(
                .configuration,
                "redirect_port \"\(configured)\" in \(settings.configFile) is not a port number (1 to 65535)")
        }
        return port
    }

    package init(
        noBrowser: Bool = false,
        identityProvider: String? = nil,
        prompt: String? = nil,
        scopes: [String] = [],
        redirectPort: Int? = nil,
        browserTimeout: Double = 180,
        managedLogin: ManagedLoginChoice = ManagedLoginChoice()
    ) {
        self.noBrowser = noBrowser
        self.identityProvider = identityProvider
        self.prompt = prompt
        self.scopes = scopes
        self.redirectPort = redirectPort
        self.browserTimeout = browserTimeout
        self.managedLogin = managedLogin
    }
}

/// A browser sign-in: the authorize URL opened (or printed), the code taken from the loopback
/// redirect or a pasted URL, exchanged at the token endpoint: a session like a password
/// sign-in's, marked with its domain (the pipeline keeps it, or not with `--no-store`).
package struct BrowserSignIn: SignInFlow {
    package let options: BrowserSignInChoice
    /// The browser's callback request, answered once the pipeline has kept the session (or failed
    /// to): a tab that says "Signed in" before the store has it would be a lie when the store refuses.
    private let tab = WaitingTab()

    package init(options: BrowserSignInChoice) { self.options = options }

    /// Known only once the managed login has answered.
    package var username: String? { nil }

    package func signIn(_ signIn: SignInContext) throws -> StoredSession {
        let context = signIn.commandContext
        let settings = signIn.settings
        let client = signIn.client
        let appClient = signIn.appClient
        let console = context.console
        let domain = try options.managedLogin.resolve(settings)
        let port = try options.port(settings)
        let redirectURI = "http://localhost:\(port)/callback"
        let listener = try LoopbackListener(port: port)
        let scopes = options.scopes.isEmpty ? BrowserSignInChoice.defaultScopes : ScopeList.normalized(options.scopes)
        let request = AuthorizationRequest(
            clientId: client.clientId, redirectURI: redirectURI, scopes: scopes,
            identityProvider: options.identityProvider, prompt: options.prompt)
        let url = domain.authorizeURL(request)

        // The browser is given /start, which only this user's processes are sent on from: the
        // authorize URL (state, nonce, PKCE challenge) is on no argv another user can read in /proc.
        listener.startURL = url
        let launcher = BrowserLauncher(environment: context.environment)
        let opened = options.noBrowser ? nil : launcher.open("http://localhost:\(port)/start")
        if let opened {
            console.message("Opened the sign-in page with \(opened). If it did not open, visit:\n  \(url)")
        } else {
            console.message("Open this URL in a browser to sign in:\n  \(url)")
        }
        // Where a person can paste the redirect URL the browser could not open (over SSH, say).
        let input: LineReader?
        if console.inputIsTerminal {
            console.message(
                "Waiting for the browser… or paste the URL it ends on (http://localhost:\(port)/callback?…) here and press Enter:"
            )
            input = LineReader(fd: STDIN_FILENO)
        } else if options.noBrowser {
            input = LineReader(fd: STDIN_FILENO)
        } else {
            input = nil
        }

        let deadline = Date().addingTimeInterval(options.browserTimeout)
        let endpoint = TokenEndpoint(domain: domain, transport: try context.transport(), client: appClient)
        while true {
            let callback: AuthorizationCallback
            var connection: LoopbackListener.Connection?
            switch listener.next(deadline: deadline, input: input) {
            case .timedOut:
                throw AuthctlError(
                    .notAuthorized,
                    """
                    no answer from the browser within \(Int(options.browserTimeout)) s (--browser-timeout); nothing was stored. \
                    Run authctl signin --browser again
                    """)
            case .line(let text):
                guard !text.trimmedBlanks().isEmpty else { continue }
                guard let pasted = AuthorizationCallback(pastedURL: text, redirectURI: redirectURI) else {
                    console.message(
                        "authctl: that is not the redirect URL (it starts with \(redirectURI)?); paste the whole URL from the browser's address bar"
                    )
                    continue
                }
                callback = pasted
            case .callback(let query, let conn):
                callback = AuthorizationCallback(query: query)
                connection = conn
            }
            // A redirect that is not this sign-in's (no state, another state) is answered and
            // ignored: anyone could send one, and it must not end the sign-in.
            if !callback.isForState(request.state) {
                connection?.respond(
                    status: "400 Bad Request",
                    html: BrowserPages.page(
                        "Not this sign-in", "This redirect does not belong to the sign-in authctl is waiting for."))
                if connection == nil { console.message(Messages.notThisSignIn) }
                continue
            }
            do {
                let code = try callback.code(expectedState: request.state)
                let tokens = try endpoint.exchange(
                    code: code, redirectURI: redirectURI, verifier: request.pkce.verifier)
                try tokens.checkIDToken(nonce: request.nonce, clientId: client.clientId)
                var session = try StoredSession(
                    tokens: tokens.authenticationResult, fallbackUsername: "", profile: settings.profile,
                    client: client, now: context.now())
                session.domain = domain.base
                session.logoutURI = "http://localhost:\(port)/signed-out"
                tab.connection = connection
                return session
            } catch let error as OAuthError {
                let failure = Failover.managedLoginFailure(
                    error, domain: domain.base, settings: settings,
                    otherWay: "`authctl signin` without --browser fails over")
                connection?.respond(
                    status: "400 Bad Request",
                    html: BrowserPages.page(
                        "Sign-in failed", "authctl did not sign in: \(failure.message). You can close this tab."))
                throw failure
            } catch {
                let failure = AuthctlError.from(error)
                connection?.respond(
                    status: "500 Internal Server Error",
                    html: BrowserPages.page(
                        "Sign-in failed", "authctl did not sign in: \(failure.message). You can close this tab."))
                throw failure
            }
        }
    }
}

extension BrowserSignIn {
    package func concluded(_ outcome: Result<StoredSession, Error>) {
        guard let connection = tab.connection else { return }
        tab.connection = nil
        switch outcome {
        case .success(let session):
            connection.respond(
                status: "200 OK",
                html: BrowserPages.page(
                    "Signed in",
                    "authctl signed in as \(session.username) (profile \(session.profile)). You can close this tab."))
        case .failure(let error):
            let failure = AuthctlError.from(error)
            connection.respond(
                status: "500 Internal Server Error",
                html: BrowserPages.page(
                    "Sign-in failed", "authctl did not sign in: \(failure.message). You can close this tab."))
        }
    }
}

/// The browser connection a sign-in leaves open for its answer.
private final class WaitingTab {
    package var connection: LoopbackListener.Connection?
}

extension StoredSession {
    /// `<domain>/logout?client_id=…&logout_uri=…` for a browser session: without it the browser's
    /// managed-login cookie signs the next `signin --browser` straight back in as the same person.
    package var managedLoginLogoutURL: String? {
        guard let domain, let logoutURI else { return nil }
        return ManagedLoginDomain(domain).logoutURL(clientId: clientId, logoutURI: logoutURI)
    }
}

/// The managed login's logout link after a browser session's sign-out: printed, and opened with
/// --browser. The managed login then sends the browser back to the session's logout URI
/// (`http://localhost:N/signed-out`): authctl answers it for a while, so the tab says the sign-out
/// is done instead of showing a connection error.
package enum ManagedLogout {
    /// How long `signout --browser` waits for the browser to come back from the logout page.
    package static let returnTimeout: Double = 30

    package static func offer(_ url: String, returningTo logoutURI: String?, open: Bool, context: CommandContext) {
        guard open else {
            context.console.message("To sign the browser out of the managed login too, open:\n  \(url)")
            return
        }
        // Listening before the browser starts: it may come back at once. A taken port only costs the page.
        let listener = logoutURI.flatMap(loopbackPort).flatMap { try? LoopbackListener(port: $0, path: "/signed-out") }
        guard let opened = BrowserLauncher(environment: context.environment).open(url) else {
            context.console.message("To sign the browser out of the managed login too, open:\n  \(url)")
            return
        }
        context.console.message("Opened the managed login's logout page with \(opened):\n  \(url)")
        guard let listener else { return }
        switch listener.next(deadline: Date().addingTimeInterval(returnTimeout), input: nil) {
        case .callback(_, let connection):
            connection.respond(
                status: "200 OK",
                html: BrowserPages.page(
                    "Signed out", "authctl signed you out of the managed login. You can close this tab."))
            context.console.message("The browser is signed out of the managed login.")
        case .line, .timedOut:
            context.console.message(
                "The browser did not come back from the logout page within \(Int(returnTimeout)) s; if it showed an error, the managed login may still be signed in there."
            )
        }
    }

    /// N of `http://localhost:N/signed-out`, the logout URI browser sessions are stored with.
    package static func loopbackPort(_ logoutURI: String) -> UInt16? {
        guard let parts = URLComponents(string: logoutURI), parts.scheme == "http", parts.host == "localhost",
            let port = parts.port, (1...65535).contains(port)
        else { return nil }
        return UInt16(port)
    }
}

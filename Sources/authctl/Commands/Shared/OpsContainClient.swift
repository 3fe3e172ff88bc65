import AuthctlCore
import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `ops contain --client-id ID` with no user: the app client's secret rotated (ClientSecretRotation),
/// the new one shown once on a terminal or written to `--secret-out` (mode 0600), never to the
/// record, the audit log or argv.
struct OpsContainClient {
    var options: BulkRunOptions
    var secretOut: String?

    func run(in context: CommandContext, admin: AdminService, state: OpsStateDirectory, clientId: String) throws {
        // Where the new secret goes is settled before anything changes.
        guard secretOut != nil || isatty(STDOUT_FILENO) == 1 else {
            throw AuthctlError(
                .usage,
                "the new secret is shown once on a terminal: without one, give --secret-out FILE (written mode 0600); nothing was changed"
            )
        }
        let stem = "\(Digest.hex(admin.poolId + " " + clientId)).contain-client"
        let audit = try OpsAuditLog(path: options.auditLog ?? state.auditPath(stem))
        let rotation = ClientSecretRotation(
            service: admin.service, poolId: admin.poolId, clientId: clientId, audit: audit,
            who: .current(accessKeyId: admin.credentials.accessKeyId, environment: context.environment),
            now: context.now)
        let client = UntrustedText(clientId)
        do {
            let existing = try rotation.secrets()
            context.console.message(
                "App client \(client) has \(existing.count) secrets. Plan: \(existing.count >= 2 ? "DeleteUserPoolClientSecret for the oldest (two at most), " : "")AddUserPoolClientSecret, a client-credentials token with the new secret, then DeleteUserPoolClientSecret for every old one."
            )
            guard options.execute else {
                return context.console.message("Dry run: nothing was changed. Add --execute to do it.")
            }
            let settings = try context.settings
            let outcome = try rotation.rotate(deliver: deliver) { secret in check(secret, settings, clientId, context) }
            var text = [
                "New secret \(UntrustedText(outcome.newSecretId)) added; \(outcome.deleted.count) old secrets deleted."
            ]
            switch outcome.check {
            case .passed: text.append("The new secret was checked: a client-credentials token was issued with it.")
            case .notChecked(let why): text.append("The new secret was not checked (\(why)).")
            case .failed(let why):
                text.append("The new secret was REFUSED (\(why)): the old secrets are kept.")
                text.forEach(context.console.message)
                throw AuthctlError(
                    .someFailed, "the new secret of \(client) did not get a token; the old ones still work")
            }
            text.append(
                "Machine tokens already issued with the old secret stay valid until they expire: up to \(Format.duration(outcome.tokenLifetime.seconds))\(outcome.tokenLifetime.assumedBecause.map { " (assumed: \($0))" } ?? "") from now. Audit log: \(audit.path)"
            )
            text.forEach(context.console.message)
        } catch let error as CognitoError {
            throw AdminService.refusal(error, username: clientId, poolId: admin.poolId)
                ?? AuthctlError.from(error, endpoint: admin.endpoint)
        }
    }

    private func deliver(_ secret: String) throws {
        guard let secretOut else {
            let fd = STDOUT_FILENO
            let line = Array((secret + "\n").utf8)
            _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            return
        }
        let fd = open(secretOut, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else {
            throw AuthctlError(
                .configuration,
                "cannot create --secret-out \(UntrustedText(secretOut)) (\(String(cString: strerror(errno)))): the new secret was added; delete it with the AWS CLI or run again"
            )
        }
        defer { close(fd) }
        let bytes = Array((secret + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fsync(fd)
    }

    private func check(_ secret: String, _ settings: Settings, _ clientId: String, _ context: CommandContext)
        -> ClientSecretRotation.Check
    {
        guard let domain = try? ManagedLoginChoice().resolve(settings) else {
            return checkThroughAPI(secret, settings, clientId, context)
        }
        do {
            let endpoint = TokenEndpoint(
                domain: domain, transport: try context.transport(),
                client: AppClient(userPoolId: admin(settings), clientId: clientId, clientSecret: secret))
            _ = try endpoint.clientCredentials(scopes: [])
            return .passed
        } catch let error as OAuthError where error.code == .unauthorizedClient || error.code == .unsupportedGrantType {
            return .notChecked("the client has no client-credentials grant")
        } catch {
            return .failed(AuthctlError.from(error).message)
        }
    }

    /// Without a managed-login domain: GetClientToken, which a machine client (ALLOW_CLIENT_TOKEN_AUTH
    /// its only flow) answers; a client with user sign-in flows cannot be checked that way.
    private func checkThroughAPI(_ secret: String, _ settings: Settings, _ clientId: String, _ context: CommandContext)
        -> ClientSecretRotation.Check
    {
        var target = settings
        target.clientId = clientId
        do {
            let client = try ClientSettings(target)
            _ = try context.service(client: client).getClientToken(
                clientId: clientId, secret: secret, scopes: [])
            return .passed
        } catch let error as CognitoError where error.refusal == .clientTokenAuthNotAllowed {
            return .notChecked(
                "no managed-login domain configured (--domain, AUTHCTL_DOMAIN), and the client has user sign-in flows, so GetClientToken cannot issue it a token"
            )
        } catch {
            return .failed(AuthctlError.from(error).message)
        }
    }

    private func admin(_ settings: Settings) -> String { settings.userPoolId ?? "" }
}

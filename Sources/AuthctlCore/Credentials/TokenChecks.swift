import CognitoClient
import LocalFormats

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Offline checks of the tokens authctl hands out, and the optional signature check.
package struct TokenChecks {
    /// The profile's session service: its settings, store and transport.
    package let session: ProfileSession
    private var context: CommandContext { session.context }
    private var settings: Settings { session.settings }

    package func token(_ session: StoredSession, _ type: TokenType) -> String {
        type == .access ? session.accessToken : session.idToken
    }

    /// `iss`, `token_use`, client and `exp`; the issuer's region is the pool's own.
    package func checkClaims(_ session: StoredSession, _ type: TokenType) throws {
        let region = Settings.region(fromPoolId: session.userPoolId) ?? session.region
        let expected = TokenExpectations(
            region: region, userPoolId: session.userPoolId,
            use: type == .access ? .access : .id, clientId: session.clientId)
        do {
            _ = try JWTVerifier.checkClaims(token(session, type), expected, now: context.now())
        } catch let error as JWTError {
            throw AuthctlError(
                .notAuthorized,
                "the stored \(type.rawValue) token failed an offline check: \(error.message). Run: authctl signin")
        }
    }

    /// The RS256 signature against the pool's published keys, cached on disk per key-set URL
    /// (so one endpoint's keys never stand for another's) for their max-age, at most 24 hours.
    /// A key id the cached set lacks may mean the pool rotated its keys: one fetch, then refuse.
    package func verifySignature(_ session: StoredSession, _ type: TokenType, service: CognitoService) throws {
        let url = try jwksURL(session, type, service: service)
        let cache = JWKSCache(directory: JWKSCache.directory(environment: context.environment), url: url)
        let cached = cache.load(now: context.now())
        context.trace?.record(.cache(.keySet, hit: cached != nil))
        if let cached {
            do {
                return try JWTVerifier.checkSignature(token(session, type), keys: cached)
            } catch let error as JWTError where error.code == .unknownKey {
                // Fetched again below.
            } catch let error as JWTError {
                throw invalidSignature(type, error)
            }
        }
        let keys = try fetch(cache, service: service, url: url)
        do {
            try JWTVerifier.checkSignature(token(session, type), keys: keys)
        } catch let error as JWTError {
            throw invalidSignature(type, error)
        }
    }

    private func invalidSignature(_ type: TokenType, _ error: JWTError) -> AuthctlError {
        AuthctlError(.notAuthorized, "the \(type.rawValue) token's signature is not valid: \(error.message)")
    }

    /// The key set of the token's own issuer (one of the pool's two, `CognitoIssuer`); with an
    /// endpoint override (an emulator), the override's, as the emulator publishes it. The regional
    /// endpoint derived from the region is no override: a pool on the multi-Region issuer
    /// publishes its keys there.
    package func jwksURL(_ session: StoredSession, _ type: TokenType, service: CognitoService) throws -> String {
        if settings.endpointIsOverride { return service.jwksURL(userPoolId: session.userPoolId) }
        let region = Settings.region(fromPoolId: session.userPoolId) ?? session.region
        guard let issuer = (try? JWTClaims(token: token(session, type)))?.issuer,
            CognitoIssuer.accepted(region: region, userPoolId: session.userPoolId).contains(issuer)
        else {
            throw AuthctlError(
                .notAuthorized,
                "the stored \(type.rawValue) token names an issuer that is not its pool's; its keys are not fetched. Run: authctl signin"
            )
        }
        return CognitoIssuer.jwksURL(issuer: issuer)
    }

    private func fetch(_ cache: JWKSCache, service: CognitoService, url: String) throws -> JWKS {
        do {
            let (data, maxAge) = try service.fetchJWKS(url: url)
            cache.save(data, maxAge: maxAge ?? 3600, now: context.now())
            return try JWKS(json: data)
        } catch let error as JWTError {
            throw AuthctlError(.unavailable, "the pool's key set is unusable: \(error.message)")
        } catch {
            throw AuthctlError.from(error, endpoint: service.endpoint)
        }
    }

    package init(session: ProfileSession) {
        self.session = session
    }
}

/// The pool's public signing keys on disk (they are not secret), one file per key-set URL, with
/// the max-age they came with (never trusted beyond `CognitoService.maxJWKSCacheSeconds`).
package struct JWKSCache {
    package let directory: String
    /// The key set's URL: endpoint and pool.
    package let url: String

    package static func directory(environment: [String: String]) -> String {
        if let cache = environment["XDG_CACHE_HOME"], cache.hasPrefix("/") { return cache + "/authctl/jwks" }
        return Paths.home(environment) + "/.cache/authctl/jwks"
    }

    /// The URL with every byte but letters, digits, `-`, `_` and `.` as %XX: readable, unique,
    /// and a single path component. Nil (no caching) for a URL too long for a file name.
    private var path: String? {
        let name = PercentEncoding.encode(
            url, keeping: { PercentEncoding.isASCIIAlphanumeric($0) || $0 == "-" || $0 == "_" || $0 == "." })
        guard name.utf8.count <= 200 else {
            return nil
        }
        return directory + "/" + name + ".json"
    }

    private struct Entry: Codable {
        package var url: String
        package var fetchedAt: Date
        package var maxAge: Double
        package var jwks: JWKS
    }

    /// Keys found in a directory another user could write to could be anyone's: such a cache is not used.
    private var isPrivate: Bool {
        guard case .success(let checked) = PrivateDirectory.open(directory) else { return false }
        checked.close()
        return true
    }

    package func load(now: Date) -> JWKS? {
        guard let path, isPrivate, let data = FileManager.default.contents(atPath: path),
            let entry = try? JSONDecoder().decode(Entry.self, from: data), entry.url == url
        else { return nil }
        let age = now.timeIntervalSince(entry.fetchedAt)
        guard age >= 0, age < min(entry.maxAge, CognitoService.maxJWKSCacheSeconds) else { return nil }
        return entry.jwks
    }

    package func save(_ jwksData: Data, maxAge: Double, now: Date) {
        guard let path, let jwks = try? JWKS(json: jwksData),
            let data = try? JSONEncoder().encode(Entry(url: url, fetchedAt: now, maxAge: maxAge, jwks: jwks))
        else { return }
        guard isPrivate else { return }
        let temporary = path + ".\(getpid()).tmp"
        if FileManager.default.createFile(atPath: temporary, contents: data, attributes: [.posixPermissions: 0o600]) {
            rename(temporary, path)
        }
    }
}

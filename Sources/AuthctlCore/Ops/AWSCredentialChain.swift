import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The standard AWS credential chain, the part that needs no network: the environment, then
/// the shared credentials file. Used only by the ops commands that call IAM-signed operations.
package enum AWSCredentialChain {
    package static func resolve(environment env: [String: String]) throws -> (
        credentials: AWSCredentials, source: String
    ) {
        let value: (String) -> String? = { name in
            guard let value = env[name], !value.isEmpty else { return nil }
            return value
        }
        switch (value("AWS_ACCESS_KEY_ID"), value("AWS_SECRET_ACCESS_KEY")) {
        case (let key?, let secret?):
            return (
                AWSCredentials(accessKeyId: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN")),
                "environment"
            )
        case (_?, nil), (nil, _?):
            // Half a key pair: falling back to the file could act as someone else (botocore refuses too).
            let (present, missing) =
                value("AWS_ACCESS_KEY_ID") != nil
                ? ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") : ("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID")
            throw AuthctlError(
                .configuration,
                """
                partial AWS credentials in the environment: \(present) is set but \(missing) is not; set both, \
                or unset \(present) to use the shared credentials file
                """)
        case (nil, nil):
            break
        }
        let path = value("AWS_SHARED_CREDENTIALS_FILE") ?? (Paths.home(env) + "/.aws/credentials")
        let profile = value("AWS_PROFILE") ?? "default"
        if let text = try? String(contentsOfFile: path, encoding: .utf8) {
            let sections = parseINI(text)
            if let section = sections[profile], let key = section["aws_access_key_id"],
                let secret = section["aws_secret_access_key"],
                !key.isEmpty, !secret.isEmpty
            {
                return (
                    AWSCredentials(
                        accessKeyId: key, secretAccessKey: secret, sessionToken: section["aws_session_token"]),
                    "\(path) [\(profile)]"
                )
            }
        }
        throw AuthctlError(
            .configuration,
            """
            no AWS credentials for this admin operation: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \
            (and AWS_SESSION_TOKEN for temporary credentials), or add aws_access_key_id and aws_secret_access_key \
            to section [\(profile)] of \(path) (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE)
            """)
    }

    /// `[section]` headers and `key = value` lines; `#` and `;` start comments.
    package static func parseINI(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmedBlanks()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                var name = String(line.dropFirst().dropLast()).trimmedBlanks()
                if name.hasPrefix("profile ") { name = String(name.dropFirst("profile ".count)).trimmedBlanks() }
                current = name
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmedBlanks().lowercased()
            let value = line[line.index(after: equals)...].trimmedBlanks()
            sections[current, default: [:]][key] = value
        }
        return sections
    }
}

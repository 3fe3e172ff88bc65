import Foundation

/// application/x-www-form-urlencoded, as the token and revoke endpoints take it and as a
/// redirect's query carries it.
enum FormEncoding {
    /// RFC 3986 unreserved characters pass; everything else is percent-encoded (space too).
    private static let unreserved = CharacterSet(charactersIn:
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func escape(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    static func encode(_ fields: [(String, String)]) -> String {
        fields.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// Decodes a query or form body: `+` is a space, `%XX` a byte; a repeated name keeps its first value.
    static func decode(_ query: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let unplus = { (s: Substring) in String(s).replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = unplus(parts[0]), !name.isEmpty else { continue }
            let value = parts.count > 1 ? (unplus(parts[1]) ?? "") : ""
            if fields[name] == nil { fields[name] = value }
        }
        return fields
    }
}

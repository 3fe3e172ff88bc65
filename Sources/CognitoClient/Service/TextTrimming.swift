/// Trimming without Foundation's `trimmingCharacters(in:)`, which FoundationEssentials lacks.
/// Public: the executable and LocalFormats use FoundationEssentials only too.
extension StringProtocol {
    /// Without leading and trailing white space and line breaks (`.whitespacesAndNewlines`).
    public func trimmed() -> String {
        trimmed(where: \.isWhitespace)
    }

    /// Without leading and trailing blanks: white space other than line breaks (`.whitespaces`).
    public func trimmedBlanks() -> String {
        trimmed(where: { $0.isWhitespace && !$0.isNewline })
    }

    /// Without the leading and trailing characters for which `drop` is true.
    public func trimmed(where drop: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !drop($0) }), let last = lastIndex(where: { !drop($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}

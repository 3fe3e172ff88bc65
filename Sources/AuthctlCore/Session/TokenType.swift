/// Which of a session's tokens: `--type` of token, exec and kube-token.
package enum TokenType: String, CaseIterable {
    case access
    case id
}

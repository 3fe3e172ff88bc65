import ArgumentParser
import Foundation
import XCTest

@testable import authctl

/// Every `authctl …` command shown in README.md and docs/cli.md (code blocks and inline code)
/// goes through the real parser, validation included: a documented command that does not parse
/// fails the suite. Not commands, and skipped: synopses (`[--flag]`, `<id>`, a lone `…`, an
/// upper-case placeholder such as `STORE`), and in running text a command's bare name
/// (`authctl passkey remove`) or one of authctl's messages quoted (`authctl does not …`).
final class DocumentedExamplesTests: XCTestCase {
    private static let documents = ["README.md", "docs/cli.md"]

    private static var packageRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }

    func testEveryDocumentedCommandParses() throws {
        var checked: Set<[String]> = []
        var failures: [String] = []
        for document in Self.documents {
            let text = try String(contentsOf: Self.packageRoot.appendingPathComponent(document), encoding: .utf8)
            // Each command once (the parser takes a quarter of a second per command in a debug build).
            for example in DocumentedCommands.extract(from: text) where checked.insert(example.arguments).inserted {
                do {
                    _ = try Authctl.parseAsRoot(GlobalOptions.withDebugFormat(example.arguments))
                } catch {
                    // --help and --version end the parse as they should.
                    if Authctl.exitCode(for: error) == .success { continue }
                    failures.append(
                        "\(document):\(example.line): authctl \(example.arguments.joined(separator: " ")): "
                            + Authctl.message(for: error))
                }
            }
        }
        XCTAssertGreaterThan(checked.count, 60, "the examples were found")
        XCTAssertEqual(failures, [], failures.joined(separator: "\n"))
    }

    /// The extraction itself: pipes, `$(…)`, comments, quotes and redirections.
    func testExtraction() {
        let text = """
            Run `authctl token --verify` or `authctl signin [--code CODE]`, see `authctl store migrate`,
            `authctl does not answer`, `authctl devices forget <key>`.
            ```sh
            printf '%s\\n' "$S" | authctl configure --client-id 4abc… --client-secret-stdin   # keeps it
            curl -H "Authorization: Bearer $(authctl token)" https://x
            authctl exec -- sh -c 'echo "a | b"' && authctl status
            authctl token --pin-fd 3 3<pin.txt 2>/dev/null
            authctl: warning: not a command
            ```
            """
        XCTAssertEqual(
            DocumentedCommands.extract(from: text).map(\.arguments),
            [
                ["token", "--verify"],
                ["configure", "--client-id", "4abc…", "--client-secret-stdin"],
                ["token"],
                ["exec", "--", "sh", "-c", "echo \"a | b\""],
                ["status"],
                ["token", "--pin-fd", "3"],
            ])
    }
}

/// `authctl …` commands in Markdown, split as a shell would split them.
enum DocumentedCommands {
    struct Example: Equatable {
        var line: Int
        var arguments: [String]
    }

    static func extract(from markdown: String) -> [Example] {
        var examples: [Example] = []
        var inBlock = false
        for (index, line) in markdown.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") {
                inBlock.toggle()
                continue
            }
            // A synopsis line in a block: `(--user NAME ... | --all-users)`, `[--rate N]`.
            if inBlock && (line.contains("[--") || line.contains("(--")) { continue }
            let pieces = inBlock ? [String(line)] : inlineCode(String(line))
            for piece in pieces {
                for arguments in commands(in: piece)
                where !isSynopsis(arguments) && (inBlock || !isMentionOrMessage(arguments)) {
                    examples.append(Example(line: index + 1, arguments: arguments))
                }
            }
        }
        return examples
    }

    private static func inlineCode(_ line: String) -> [String] {
        let parts = line.split(separator: "`", omittingEmptySubsequences: false)
        return stride(from: 1, to: parts.count, by: 2).map { String(parts[$0]) }
    }

    /// A synopsis or a placeholder, not a command: `[--flag]`, `<id>`, `…`, `CMD...`, `STORE`.
    private static func isSynopsis(_ arguments: [String]) -> Bool {
        arguments.contains { word in
            word.hasPrefix("[") || word.hasPrefix("<") || word == "…" || word == "..." || word.hasSuffix("...")
                || word.hasSuffix("]") || isPlaceholder(word)
        }
    }

    private static func isPlaceholder(_ word: String) -> Bool {
        guard let first = word.unicodeScalars.first, ("A"..."Z").contains(first) else { return false }
        return word.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }

    /// Words of running text: a quoted message, not a command.
    private static let proseWords: Set<String> = [
        "a", "an", "and", "does", "fails", "is", "needs", "not", "or", "the", "was", "when", "with", "without",
    ]

    /// In running text: only a command's name (`authctl store migrate`), or prose.
    private static func isMentionOrMessage(_ arguments: [String]) -> Bool {
        let beforeSeparator = arguments.prefix { $0 != "--" }
        if beforeSeparator.contains(where: { proseWords.contains($0) || $0.hasSuffix(":") }) { return true }
        var command: ParsableCommand.Type = Authctl.self
        var rest = arguments[...]
        while let word = rest.first,
            let sub = command.configuration.subcommands.first(where: { $0._commandName == word })
        {
            command = sub
            rest = rest.dropFirst()
        }
        return rest.isEmpty
    }

    private enum Token: Equatable {
        case word(String)
        case control
    }

    /// The words after each `authctl` that starts a command, up to the next control operator.
    static func commands(in line: String) -> [[String]] {
        var result: [[String]] = []
        var current: [String]?
        var atCommandStart = true
        for token in tokens(line) {
            switch token {
            case .control:
                if let current { result.append(current) }
                current = nil
                atCommandStart = true
            case .word(let word):
                if current != nil {
                    current?.append(word)
                } else if atCommandStart && word == "authctl" {
                    current = []
                } else {
                    // Environment assignments (`X=1 authctl …`) keep the command start.
                    atCommandStart = atCommandStart && word.contains("=") && !word.hasPrefix("-")
                }
            }
        }
        if let current { result.append(current) }
        return result
    }

    /// A shell's split: quotes, backslashes, `|`, `;`, `&`, `(`, `)` and `$(` as operators, `#`
    /// comments, redirections dropped.
    private static func tokens(_ line: String) -> [Token] {
        var tokens: [Token] = []
        var word = ""
        var inWord = false
        var quote: Character?
        // A `$(…)` inside double quotes: the quote goes on after its `)`.
        var quoteAfterSubstitution = false
        var characters = Array(line)[...]
        func finish() {
            if inWord && !isRedirection(word) { tokens.append(.word(word)) }
            word = ""
            inWord = false
        }
        while let character = characters.popFirst() {
            if let open = quote {
                if character == open {
                    quote = nil
                } else if open == "\"" && character == "$" && characters.first == "(" {
                    characters = characters.dropFirst()
                    finish()
                    tokens.append(.control)
                    quote = nil
                    quoteAfterSubstitution = true
                } else if open == "\"" && character == "\\", let next = characters.popFirst() {
                    word.append(next)
                } else {
                    word.append(character)
                }
                continue
            }
            switch character {
            case "'", "\"":
                quote = character
                inWord = true
            case "\\":
                if let next = characters.popFirst() { word.append(next) }
                inWord = true
            case " ", "\t":
                finish()
            case "#" where !inWord:
                finish()
                return tokens
            case ")" where quoteAfterSubstitution:
                finish()
                tokens.append(.control)
                quote = "\""
                quoteAfterSubstitution = false
                inWord = true
            case "|", ";", "&", "(", ")":
                finish()
                tokens.append(.control)
            case "$" where characters.first == "(":
                finish()
                characters = characters.dropFirst()
                tokens.append(.control)
            default:
                word.append(character)
                inWord = true
            }
        }
        finish()
        return tokens
    }

    /// `3<pin.txt`, `2>/dev/null`, `>out`: the shell's, not the command's (`<id>` is a placeholder).
    private static func isRedirection(_ word: String) -> Bool {
        let digits = word.prefix { $0.isNumber }
        let rest = word.dropFirst(digits.count)
        if rest.first == ">" { return true }
        return rest.first == "<" && (!digits.isEmpty || !word.hasSuffix(">"))
    }
}

import CognitoClient

/// A numbered menu on the terminal: the person answers with a number or a name (3 tries).
package enum NumberedChoice {
    package static func ask<Choice>(
        _ console: Console, heading: String, _ choices: [Choice], name: (Choice) -> String,
        words: (Choice) -> String, noneChosen: String
    ) throws -> Choice {
        console.message(heading)
        for (index, choice) in choices.enumerated() {
            console.message("  \(index + 1). \(words(choice))")
        }
        for _ in 0..<3 {
            let answer = console.prompt("Number [1-\(choices.count)]: ", secret: false)?.trimmedBlanks() ?? ""
            if let number = Int(answer), (1...choices.count).contains(number) {
                return choices[number - 1]
            }
            if let byName = choices.first(where: { name($0) == answer.lowercased() }) {
                return byName
            }
            console.message("Please answer with a number from 1 to \(choices.count).")
        }
        throw AuthctlError(.usage, noneChosen)
    }
}

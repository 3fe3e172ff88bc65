/// New passwords (sign-up, reset): from the next line of standard input, or asked twice on the
/// terminal until both agree and pass the local checks (the pool's policy is the service's).
package enum NewPasswordReader {
    package static func read(
        console: Console, fromStdin: Bool, current: String? = nil, stdinMissing: String,
        prompt: String = "New password: "
    ) throws -> String {
        if fromStdin {
            guard let line = console.readLine(), !line.isEmpty else { throw AuthctlError(.usage, stdinMissing) }
            try NewPasswordRules.check(line, current: current)
            return line
        }
        for _ in 0..<3 {
            guard let first = try console.askSecret(SecretQuestion(prompt)),
                let second = try console.askSecret(
                    SecretQuestion("Repeat \(prompt.prefix(1).lowercased())\(prompt.dropFirst())"))
            else {
                throw AuthctlError(.usage, "no new password given")
            }
            guard first == second else {
                console.message("Passwords do not match; try again.")
                continue
            }
            do {
                try NewPasswordRules.check(first, current: current)
                return first
            } catch let error as AuthctlError {
                console.message(error.message)
            }
        }
        throw AuthctlError(.inputRejected, "no acceptable new password after 3 attempts")
    }
}

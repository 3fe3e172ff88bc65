// Prints a version line, as `authctl --version` does, after touching FoundationEssentials (a Date
// formatted as ISO 8601), so its start-up includes that library's initialisation.
import FoundationEssentials

let built = Date(timeIntervalSince1970: 0).formatted(Date.ISO8601FormatStyle())
print("hello 0.1.0 (\(built.prefix(4)))")

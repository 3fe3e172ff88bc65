import ArgumentParser
import Foundation

/// What a command reports: one value, written by `CommandContext.emit` in the chosen format
/// (swiftly's OutputData idea). JSON is the value encoded (a document on stdout); text is what it
/// says for people. Keys a report keeps only for its text are left out of its `CodingKeys`.
protocol CommandReport: Encodable {
    /// Text mode: each element one write to stdout (data a script may read, e.g. a token).
    var textOutput: [String] { get }
    /// Text mode: each element one message on stderr.
    var textMessages: [String] { get }
    /// JSON mode: messages for the person on stderr beside the document.
    var jsonMessages: [String] { get }
}

extension CommandReport {
    var textOutput: [String] { [] }
    var textMessages: [String] { [] }
    var jsonMessages: [String] { [] }
}

extension CommandContext {
    /// The one output path: `report` as a JSON document, or as its text.
    func emit(_ report: some CommandReport, as format: OutputFormat) {
        switch format {
        case .json:
            printJSON(report)
            report.jsonMessages.forEach(console.message)
        case .text:
            report.textOutput.forEach(console.output)
            report.textMessages.forEach(console.message)
        }
    }
}

extension ParsableCommandWithGlobals {
    /// Emits `report` in the format of this command's `--output`.
    func emit(_ report: some CommandReport, in context: CommandContext) {
        context.emit(report, as: global.output)
    }
}

/// An optional written as `null` when absent (synthesised Encodable leaves the key out), so
/// scripts see every key of a report in every answer.
@propertyWrapper
struct Nullable<Value: Encodable>: Encodable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a command reports: one value, written by `CommandContext.emit` in the chosen format
/// (swiftly's OutputData idea). JSON is the value encoded (a document on stdout); text is what it
/// says for people. Keys a report keeps only for its text are left out of its `CodingKeys`.
package protocol CommandReport: Encodable {
    /// Text mode: each element one write to stdout (data a script may read, e.g. a token).
    var textOutput: [String] { get }
    /// Text mode: each element one message on stderr.
    var textMessages: [String] { get }
    /// JSON mode: messages for the person on stderr beside the document.
    var jsonMessages: [String] { get }
    /// A fixed document for another program (kubectl's ExecCredential, the AWS CLI's
    /// credential_process JSON, an authenticator handout): written to stdout as it is in either
    /// format, in place of `textOutput` or the encoded report.
    var document: String? { get }
}

extension CommandReport {
    package var textOutput: [String] { [] }
    package var textMessages: [String] { [] }
    package var jsonMessages: [String] { [] }
    package var document: String? { nil }
}

extension CommandContext {
    /// The one output path: `report` as a JSON document, or as its text, in the command's format.
    package func emit(_ report: some CommandReport) {
        switch outputFormat {
        case .json:
            if let document = report.document { console.output(document) } else { printJSON(report) }
            report.jsonMessages.forEach(console.message)
        case .text:
            if let document = report.document {
                console.output(document)
            } else {
                report.textOutput.forEach(console.output)
            }
            report.textMessages.forEach(console.message)
        }
    }
}

/// An optional written as `null` when absent (synthesised Encodable leaves the key out), so
/// scripts see every key of a report in every answer.
@propertyWrapper
package struct Nullable<Value: Encodable>: Encodable {
    package var wrappedValue: Value?

    package init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue) } else { try container.encodeNil() }
    }
}

/// `--output`: how every report of the command is written.
package enum OutputFormat: String, CaseIterable {
    case text
    case json
}

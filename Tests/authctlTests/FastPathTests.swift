import ArgumentParser
import Foundation
import XCTest

@testable import authctl

/// The hot commands' two front doors cannot drift: over argument lines generated from
/// ArgumentParser's own description of the commands (`--experimental-dump-help`), the fast path
/// either declines or parses exactly the values ArgumentParser parses; and every option of the
/// hot commands is classified (taken or declined), so a new option fails here until it is.
final class FastPathTests: XCTestCase {
    private static let commands = ["token", "kube-token", "aws-credentials", "whoami"]
    private static let types: [String: ParsableCommand.Type] = [
        "token": Token.self, "kube-token": KubeToken.self, "aws-credentials": AWSCredentialsCommand.self,
        "whoami": WhoAmI.self,
    ]

    /// The option names (`--long`, `-s`) of a command, from `--experimental-dump-help`.
    private static func optionNames(_ command: String) throws -> (all: [String], allValues: [String: [String]]) {
        var dump = ""
        do {
            _ = try Authctl.parseAsRoot([command, "--experimental-dump-help"])
            XCTFail("--experimental-dump-help did not ask for the dump")
        } catch {
            dump = Authctl.fullMessage(for: error)
        }
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any])
        let info = try XCTUnwrap(root["command"] as? [String: Any])
        var names: [String] = []
        var allValues: [String: [String]] = [:]
        for argument in info["arguments"] as? [[String: Any]] ?? [] {
            for name in argument["names"] as? [[String: Any]] ?? [] {
                let kind = name["kind"] as? String
                let spelled = (kind == "short" ? "-" : "--") + (name["name"] as? String ?? "")
                names.append(spelled)
                allValues[spelled] = argument["allValues"] as? [String]
            }
            if argument["kind"] as? String == "positional" { names.append("<positional>") }
        }
        return (names, allValues)
    }

    func testEveryOptionOfTheHotCommandsIsClassified() throws {
        for command in Self.commands {
            let table = try XCTUnwrap(FastPath.tables[command])
            let names = try Self.optionNames(command).all
            for name in names where !table.taken.contains(name) && !table.declined.contains(name) {
                XCTFail("\(command) \(name): new option; FastPath.tables must take or decline it")
            }
            for name in table.taken.union(table.declined) where !names.contains(name) {
                XCTFail("\(command) \(name): FastPath.tables names an option the command no longer has")
            }
            XCTAssertTrue(table.taken.isDisjoint(with: table.declined), command)
        }
    }

    /// Values tried for every option: valid ones, the edges of every check, and shapes a
    /// hand-written parser gets wrong (dash-led, empty, a sign, hex, blanks, `=` inside, overflow).
    /// Each ArgumentParser parse costs tens of milliseconds in a debug build: the table is lean.
    private static let values = [
        "alice", "60", "-1", "", "0", "86401", "3601", "0.5", "1e3", "0x10", "nan", "+3", " 60", "a=b",
        "arn:aws:iam::123456789012:role/reader", "2147483648",
    ]

    private static func lines(_ command: String) throws -> [[String]] {
        let (names, allValues) = try optionNames(command)
        let options = names.filter { $0 != "<positional>" }
        let taken = options.filter { FastPath.tables[command]?.taken.contains($0) ?? false }
        func valid(_ option: String) -> String { allValues[option]?.last ?? "60" }
        var lines: [[String]] = [[command], [command, "--"], [command, "--nope"], [command, "--prof", "x"]]
        for option in options {
            for (index, value) in (values + (allValues[option] ?? [])).enumerated() {
                // Both spellings for the first few values (and every dash-led one), then by turns.
                if index < 4 || value.hasPrefix("-") || index % 2 == 0 { lines.append([command, option, value]) }
                if index < 4 || value.hasPrefix("-") || index % 2 == 1 {
                    lines.append([command, "\(option)=\(value)"])
                }
            }
            lines.append([command, option])
            lines.append([command, option, "--"])
            lines.append([command, "--", option, "x"])
            lines.append([command, option, valid(option), option, valid(option)])
            lines.append([command, option, allValues[option]?.first ?? "60", option, valid(option)])
        }
        // Neighbours in both orders, and every taken option at once, forwards and backwards.
        for (index, first) in taken.enumerated() {
            let second = taken[(index + 1) % taken.count]
            lines.append([command, first, valid(first), second, allValues[second]?.first ?? "61"])
            lines.append([command, "\(second)=\(valid(second))", first, valid(first)])
        }
        let all = taken.flatMap { [$0, valid($0)] }
        lines.append([command] + all)
        lines.append([command] + taken.reversed().map { "\($0)=\(valid($0))" })
        // A declined option beside taken ones declines the line.
        for option in options where !taken.contains(option) { lines.append([command] + all + [option]) }
        return lines
    }

    func testTheFastPathDeclinesOrParsesWhatArgumentParserParses() throws {
        var taken = 0
        var declined = 0
        for command in Self.commands {
            for line in try Self.lines(command) {
                guard let fast = FastPath.parse(line) else {
                    declined += 1
                    continue
                }
                taken += 1
                // The subcommand's own parser: what the root dispatches to, without the root's 24 commands.
                let parsed: ParsableCommand
                do {
                    parsed = try Self.types[command]!.parse(Array(line.dropFirst()))
                } catch {
                    XCTFail("\(line): the fast path took a line ArgumentParser refuses: \(Authctl.message(for: error))")
                    continue
                }
                guard let hot = parsed as? HotCommand else {
                    XCTFail("\(line): ArgumentParser parsed \(type(of: parsed)), not a hot command")
                    continue
                }
                XCTAssertEqual(hot.hotInvocation, fast, "\(line)")
            }
        }
        // A fast path that declined everything would pass the loop: the hot case must be taken.
        print("FastPathTests: \(taken) lines taken, \(declined) declined")
        XCTAssertGreaterThan(taken, 300, "lines the fast path took")
        XCTAssertGreaterThan(declined, 300, "lines the fast path declined")
    }

    /// The lines kubectl, the AWS CLI and scripts run are taken (they are the point of it).
    func testTheHotCaseIsTaken() {
        let hot: [[String]] = [
            ["token"], ["token", "--profile", "ci", "--type", "id", "--min-valid", "300"],
            ["token", "--store=kernel-keyring", "--output", "json"],
            ["kube-token", "--profile", "prod"], ["kube-token", "--profile=prod", "--type", "access"],
            ["aws-credentials", "--profile", "dev"], ["aws-credentials", "--format", "env", "--profile", "dev"],
            ["whoami"], ["whoami", "--profile", "dev", "--output", "json"],
        ]
        for line in hot { XCTAssertNotNil(FastPath.parse(line), "\(line)") }
        let notHot: [[String]] = [
            [], ["signin"], ["token", "--help"], ["token", "--verify"], ["token", "--password-stdin"],
            ["token", "--type", "id", "--type", "id"], ["kube-token", "--version"], ["exec", "--", "env"],
            ["whoami", "--verify"], ["whoami", "--factors"], ["whoami", "--profile", "dev", "--verify"],
        ]
        for line in notHot { XCTAssertNil(FastPath.parse(line), "\(line)") }
    }
}

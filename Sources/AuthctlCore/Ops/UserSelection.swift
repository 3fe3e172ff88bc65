import CognitoClient

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Which users an ops command acts on: exactly one of `--user` (repeatable), `--users-file`,
/// `--group`, `--filter`, `--all-users`.
package enum UserSelection: Equatable {
    case users([String])
    /// A file of usernames, one a line (stdin is spooled to a file first: it is read twice).
    case file(path: String, digest: String)
    case group(String)
    case filter(String)
    case allUsers

    /// What keys the checkpoint: the same selection, the same key (a file by its content).
    package var key: String {
        switch self {
        case .users(let names): return "users:" + names.joined(separator: "\n")
        case .file(_, let digest): return "file:" + digest
        case .group(let name): return "group:" + name
        case .filter(let expression): return "filter:" + expression
        case .allUsers: return "all"
        }
    }

    /// For people (outside text escaped) and the summary.
    package var description: String {
        switch self {
        case .users(let names):
            return names.count == 1
                ? "user \(UntrustedText(names[0]))" : "\(names.count) users named on the command line"
        case .file(let path, _): return "the users in \(UntrustedText(path))"
        case .group(let name): return "the members of group \(UntrustedText(name))"
        case .filter(let expression): return "the users matching \(UntrustedText(expression))"
        case .allUsers: return "EVERY user of the pool"
        }
    }
}

/// Where a page starts: the service's pagination token (nil: the first page) for a listing, the
/// number of lines (or names) before it for a file or a list. A checkpoint keeps the current
/// page's start and how many of its users are done.
package struct PageCursor: Codable, Equatable {
    package var token: String?
    package var line: Int = 0

    package init(token: String? = nil, line: Int = 0) {
        self.token = token
        self.line = line
    }
}

/// Users page by page, so memory stays flat whatever their number.
package protocol UserSource: AnyObject {
    /// Where the page `nextPage()` returned last started.
    var pageStart: PageCursor { get }
    /// The next page's usernames, nil after the last page.
    func nextPage() throws -> [String]?
}

/// ListUsers / ListUsersInGroup, one call a page, paced by `pacer`; `call` runs each request
/// (the ops engine's retries).
package final class ListingSource: UserSource {
    private let fetch: (String?) throws -> (users: [ListedUser], next: String?)
    package private(set) var pageStart: PageCursor
    private var nextToken: String?
    private var finished = false

    package init(
        service: CognitoService, poolId: String, selection: UserSelection, start: PageCursor,
        call: @escaping (() throws -> Void) throws -> Void
    ) {
        pageStart = start
        nextToken = start.token
        switch selection {
        case .group(let group):
            fetch = { token in
                var page: ListUsersInGroupResponse?
                do {
                    try call {
                        page = try service.listUsersInGroup(userPoolId: poolId, groupName: group, nextToken: token)
                    }
                } catch let missing as CognitoError where missing.refusal == .resourceNotFound && token == nil {
                    // One error type for a missing pool and a missing group: the pool is listed
                    // once to tell which (a pool that answers has no such group).
                    do {
                        try call { _ = try service.listUsers(userPoolId: poolId, filter: nil, paginationToken: nil) }
                    } catch {
                        throw missing
                    }
                    throw AuthctlError(.inputRejected, "the user pool \(poolId) has no group \(UntrustedText(group))")
                }
                return (page?.users ?? [], page?.nextToken)
            }
        default:
            let filter: String? = if case .filter(let expression) = selection { expression } else { nil }
            fetch = { token in
                var page: ListUsersResponse?
                try call { page = try service.listUsers(userPoolId: poolId, filter: filter, paginationToken: token) }
                return (page?.users ?? [], page?.paginationToken)
            }
        }
    }

    package func nextPage() throws -> [String]? {
        guard !finished else { return nil }
        pageStart = PageCursor(token: nextToken)
        let page = try fetch(nextToken)
        nextToken = page.next.flatMap { $0.isEmpty ? nil : $0 }
        if nextToken == nil { finished = true }
        return page.users.compactMap { $0.username.flatMap { $0.isEmpty ? nil : $0 } }
    }
}

/// Usernames named on the command line, in pages.
package final class ListSource: UserSource {
    private let names: [String]
    package private(set) var pageStart: PageCursor
    private var position: Int

    package init(_ names: [String], start: PageCursor) {
        self.names = names
        pageStart = start
        position = start.line
    }

    package func nextPage() throws -> [String]? {
        guard position < names.count else { return nil }
        pageStart = PageCursor(line: position)
        let end = min(names.count, position + CognitoService.maximumPageSize)
        defer { position = end }
        return Array(names[position..<end])
    }
}

/// A users file, read a page of lines at a time: one username a line, blank lines and `#`
/// comments skipped, surrounding blanks trimmed.
package final class FileSource: UserSource {
    private let file: UnsafeMutablePointer<FILE>
    package private(set) var pageStart: PageCursor
    private var line = 0

    package init(path: String, start: PageCursor) throws {
        guard let file = fopen(path, "r") else {
            throw AuthctlError(
                .inputRejected, "cannot read the users file \(UntrustedText(path)): \(String(cString: strerror(errno)))"
            )
        }
        self.file = file
        pageStart = start
        while line < start.line, try readLine() != nil {}
    }

    deinit { fclose(file) }

    /// A line's most bytes: a username is at most 128 characters (of up to 4 bytes each), with room
    /// for blanks around it or a comment. A longer line is no username: the file is refused
    /// without holding or printing the line (a 100 MB line cost 500 MB and was printed back).
    static let maximumLineBytes = 1024

    private func readLine() throws -> String? {
        var buffer = [CChar](repeating: 0, count: Self.maximumLineBytes + 2)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return nil }
        line += 1
        let text = String(cString: buffer)
        if !text.hasSuffix("\n") && feof(file) == 0 {
            throw AuthctlError(
                .inputRejected,
                "line \(line) of the users file is longer than \(Self.maximumLineBytes) bytes: usernames are at most 128 characters; nothing was done"
            )
        }
        return text
    }

    package func nextPage() throws -> [String]? {
        pageStart = PageCursor(line: line)
        var names: [String] = []
        // A page is a fixed number of lines (not of names), so a page's start is a line count.
        for _ in 0..<CognitoService.maximumPageSize {
            guard let text = try readLine() else { break }
            if let name = Self.username(text) {
                guard name.count <= 128 else {
                    throw AuthctlError(
                        .inputRejected,
                        "line \(line) of the users file holds \(name.count) characters: usernames are at most 128; nothing was done"
                    )
                }
                names.append(name)
            }
        }
        if names.isEmpty && feof(file) != 0 && line == pageStart.line { return nil }
        return names
    }

    /// The username on a line, nil for a blank line or a comment.
    package static func username(_ line: String) -> String? {
        let name = line.trimmed()
        return name.isEmpty || name.hasPrefix("#") ? nil : name
    }
}

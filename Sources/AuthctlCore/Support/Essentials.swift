#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

// What the executable used to take from the full Foundation (NSString paths, NSHomeDirectory,
// String(format:), FileHandle, Thread, an error's localizedDescription), on FoundationEssentials
// and libc: the full Foundation brings ICU's data and 1,764 conformance records into the static
// binary (docs/performance.md). Trimming and percent-encoding are CognitoClient's (TextTrimming,
// PercentEncoding), shared with the libraries.

package enum Paths {
    /// `$HOME` from `environment`, else the user's home directory in the password database
    /// (NSHomeDirectory's answer).
    package static func home(_ environment: [String: String]) -> String {
        environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
    }

    /// NSString's `deletingLastPathComponent`: `/a/b` and `/a/b/` give `/a`, `/a` gives `/`, a
    /// name without a slash gives the empty string, and a run of slashes counts as one
    /// (`/x//authctl/config.toml` gives `/x/authctl`: the kernel keyring's namespace is a hash of it).
    package static func parent(of path: String) -> String {
        var collapsed = ""
        var afterSlash = false
        for character in path {
            if character == "/" && afterSlash { continue }
            afterSlash = character == "/"
            collapsed.append(character)
        }
        while collapsed.count > 1, collapsed.hasSuffix("/") { collapsed.removeLast() }
        guard let slash = collapsed.lastIndex(of: "/") else { return "" }
        return slash == collapsed.startIndex ? "/" : String(collapsed[..<slash])
    }
}

package enum Numbers {
    /// printf's `%.1f` (`String(format: "%.1f", value)`): rounded to one decimal as C rounds it,
    /// half to even on the binary value (2.25 gives 2.2, 0.05 gives 0.1).
    package static func oneDecimal(_ value: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        let length = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.1f", $0) }
        guard length >= 0, Int(length) < buffer.count else { return String(value) }
        return String(decoding: buffer[..<Int(length)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// A file opened for reading with open(2) (FileHandle is the full Foundation's).
package final class ReadableFile {
    private let descriptor: Int32

    package init?(path: String) {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        descriptor = fd
    }

    deinit { Glibc.close(descriptor) }

    /// Moves to `offset` from the start; false when the file cannot seek there.
    package func seek(to offset: Int64) -> Bool {
        lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset)
    }

    /// Up to `count` bytes; empty at the end of the file, nil on a read error.
    package func read(upTo count: Int) -> Data? {
        var bytes = [UInt8](repeating: 0, count: count)
        while true {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, count) }
            if got >= 0 { return Data(bytes[..<got]) }
            if errno != EINTR { return nil }
        }
    }

    /// The rest of the file, or nil on a read error or once it passes `limit` bytes.
    package func readToEnd(limit: Int) -> Data? {
        var data = Data()
        while let chunk = read(upTo: 1 << 16) {
            if chunk.isEmpty { return data }
            data.append(chunk)
            if data.count > limit { return nil }
        }
        return nil
    }
}

package enum Threads {
    /// Runs `body` on a new thread with a stack of `stackSize` bytes (as Foundation's Thread with
    /// `stackSize`): a thread of its own, not a Dispatch worker, whose pool is as wide as the cores.
    package static func start(stackSize: Int, _ body: @escaping () -> Void) {
        final class Box {
            let body: () -> Void
            init(_ body: @escaping () -> Void) { self.body = body }
        }
        // Allocated, not `pthread_attr_t()`: MemberImportVisibility attributes that C struct's
        // initialiser to the first module whose headers name it (CCurl), not to Glibc.
        let attributes = UnsafeMutablePointer<pthread_attr_t>.allocate(capacity: 1)
        pthread_attr_init(attributes)
        defer {
            pthread_attr_destroy(attributes)
            attributes.deallocate()
        }
        pthread_attr_setstacksize(attributes, stackSize)
        pthread_attr_setdetachstate(attributes, Int32(PTHREAD_CREATE_DETACHED))
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, attributes,
            { context in
                Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
                return nil
            }, context)
        if started != 0 {
            // No thread: run it here rather than lose the work (the caller waits for it either way).
            Unmanaged<Box>.fromOpaque(context).takeRetainedValue().body()
        }
    }
}

package enum ErrorText {
    /// For a file-system error (FoundationEssentials' CocoaError), the system's reason
    /// (`Not a directory`); for any other error, its description.
    package static func reason(_ error: Error) -> String {
        if let cocoa = error as? CocoaError, let posix = cocoa.userInfo["NSUnderlyingError"] as? POSIXError {
            return String(cString: strerror(posix.code.rawValue))
        }
        return "\(error)"
    }
}

/// A mutual-exclusion lock (NSLock's lock, unlock and withLock), over a pthread mutex.
// Unchecked: the pthread mutex is the synchronisation; it lives at a fixed address, never copied.
package final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }

    package func unlock() { pthread_mutex_unlock(mutex) }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

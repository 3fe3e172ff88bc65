#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Bytes the key agent holds for one request or answer (a file key, a plaintext document): in
/// pages mapped for them alone, locked (`mlock`: never swapped) when the locked-memory limit
/// allows, left out of core dumps (`MADV_DONTDUMP`), zeroed and unmapped when released, so no
/// copy is left behind in the heap for malloc to hand out or keep. Fixed capacity: it never
/// reallocates (a growing array leaves its old copies behind unwiped).
package final class LockedBuffer {
    private let base: UnsafeMutableRawPointer
    private let mapped: Int
    package let capacity: Int
    package private(set) var count = 0
    /// Whether `mlock` succeeded (the limit is per process; wiping happens either way).
    package let isLocked: Bool

    package init(capacity: Int) throws {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapped = max(page, (capacity + page - 1) / page * page)
        guard let pointer = mmap(nil, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
            pointer != MAP_FAILED
        else {
            throw SecureStoreError(
                kind: .failed,
                message: "cannot map \(mapped) bytes of agent memory: \(String(cString: strerror(errno)))")
        }
        base = pointer
        self.mapped = mapped
        self.capacity = capacity
        isLocked = mlock(pointer, mapped) == 0
        _ = madvise(pointer, mapped, 16)  // MADV_DONTDUMP
    }

    deinit {
        memset(base, 0, mapped)
        if isLocked { munlock(base, mapped) }
        munmap(base, mapped)
    }

    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// The free space after `count`, to be filled and then claimed with `advance`.
    package var spare: UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: base + count, count: capacity - count)
    }

    package func advance(_ written: Int) {
        precondition(written >= 0 && written <= capacity - count, "past the buffer's capacity")
        count += written
    }

    package func append(_ source: UnsafeRawBufferPointer) {
        precondition(source.count <= capacity - count, "past the buffer's capacity")
        if let from = source.baseAddress { (base + count).copyMemory(from: from, byteCount: source.count) }
        count += source.count
    }

    package func append(_ source: [UInt8]) {
        source.withUnsafeBytes { append($0) }
    }

    /// Zeroes what it holds and starts again from empty (one buffer read line after line).
    package func clear() {
        memset(base, 0, count)
        count = 0
    }

    /// Copies `chunk` in and zeroes the caller's copy (swift-crypto hands plaintext back in a `Data`).
    package func take(_ chunk: inout Data) {
        chunk.withUnsafeMutableBytes { raw in
            append(UnsafeRawBufferPointer(raw))
            if let start = raw.baseAddress { memset(start, 0, raw.count) }
        }
    }
}

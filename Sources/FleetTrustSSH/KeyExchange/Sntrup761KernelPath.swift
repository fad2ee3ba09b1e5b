import Synchronization
#if canImport(Glibc)
import Glibc
#endif
#if arch(x86_64)
import CLinux
#endif

/// Which code runs sntrup761's hot loops (the ring products and the R/q reciprocal's division
/// steps): the AVX2 kernels of `CSntrup761AVX2` where the CPU and the OS support AVX2, else the
/// portable Swift (SSE2 on x86-64, NEON on aarch64). Both make the same values, so the same
/// bytes on the wire; AVX2 does each operation on twice the lanes.
///
/// Chosen once per process from the CPU's features. `FLEETTRUST_SNTRUP761_PORTABLE=1` in the
/// environment forces the portable path (to measure it, or to rule the AVX2 code out); the
/// tests force it with `withPortablePath` to run every check of the arithmetic on both.
enum Sntrup761KernelPath: Sendable {
    case avx2, portable

    /// The path taken now.
    static var current: Self { portableForced.load(ordering: .relaxed) ? .portable : detected }

    /// body with the portable path forced, whatever the CPU supports.
    static func withPortablePath<Result>(_ body: () throws -> Result) rethrows -> Result {
        let before = portableForced.exchange(true, ordering: .relaxed)
        defer { portableForced.store(before, ordering: .relaxed) }
        return try body()
    }

    private static let portableForced = Atomic<Bool>(false)

    private static let detected: Self = {
        #if arch(x86_64)
        let forced = getenv("FLEETTRUST_SNTRUP761_PORTABLE").map { String(cString: $0) == "1" } ?? false
        return !forced && fleettrust_cpu_has_avx2() != 0 ? .avx2 : .portable
        #else
        return .portable
        #endif
    }()
}

#if arch(x86_64)
import CSntrup761AVX2
#endif

/// A sorting network (bitonic, padded to 1024 entries) for the words behind a short sntrup761
/// polynomial: the same compare-exchanges in the same order whatever the words are, so the
/// time taken says nothing about where the secret's nonzero coefficients land. Padding sorts
/// last: a marked word is at most 0xFFFFFFFE. The direction of every exchange depends only on
/// its position.
///
/// Each stage's pairs are walked as runs of `distance` neighbours facing the run `distance`
/// further on, so the exchange loop is a plain loop over two pointers, which the compiler
/// vectorises. Runs shorter than eight would be scalar, and they are half of the stages (the
/// last three of every merge): from merges of eight on, those three stages run on each group
/// of eight words as two four-lane vectors, the pairs brought face to face by shuffles. Where
/// the CPU has AVX2 (`Sntrup761KernelPath`), the same network runs in C on eight lanes with
/// AVX2's unsigned minimum and maximum.
enum ConstantTimeSort {
    static func sorted(_ words: [UInt32]) -> [UInt32] {
        let size = 1024
        var padded = words + [UInt32](repeating: .max, count: size - words.count)
        padded.withUnsafeMutableBufferPointer { x in
            let base = x.baseAddress!
            #if arch(x86_64)
            if Sntrup761KernelPath.current == .avx2 { return fleettrust_sntrup761_avx2_sort(base) }
            #endif
            var block = 2
            while block <= size {
                var distance = block / 2
                while distance >= 8 {
                    for start in stride(from: 0, to: size, by: 2 * distance) {
                        let first = base + start, second = base + start + distance
                        let ascending = start & block == 0
                        exchange(low: ascending ? first : second, high: ascending ? second : first, distance)
                    }
                    distance /= 2
                }
                if block >= 8 {
                    mergeGroupsOfEight(base, size, block)
                } else {
                    smallMerge(base, size, block)
                }
                block *= 2
            }
        }
        return Array(padded[0..<words.count])
    }

    /// The stages of distance below `block` (at most 2) of the first two merges, one exchange at a time.
    private static func smallMerge(_ base: UnsafeMutablePointer<UInt32>, _ size: Int, _ block: Int) {
        var distance = block / 2
        while distance > 0 {
            for start in stride(from: 0, to: size, by: 2 * distance) {
                let first = base + start, second = base + start + distance
                for k in 0..<distance {
                    (first[k], second[k]) = ordered(first[k], second[k], ascending: start & block == 0)
                }
            }
            distance /= 2
        }
    }

    /// The stages of distance 4, 2 and 1 of a merge of `block` ≥ 8 words, on each group of
    /// eight: x0...x3 in one vector and x4...x7 in the other, regrouped between stages so that
    /// each exchange pairs lane i of one with lane i of the other. The whole group has the
    /// direction of its merge.
    @inline(never)
    private static func mergeGroupsOfEight(_ base: UnsafeMutablePointer<UInt32>, _ size: Int, _ block: Int) {
        for group in stride(from: 0, to: size, by: 8) {
            let ascending = group & block == 0
            let words = UnsafeMutableRawPointer(base + group)
            var low = words.loadUnaligned(as: SIMD4<UInt32>.self)
            var high = words.loadUnaligned(fromByteOffset: 16, as: SIMD4<UInt32>.self)
            // Distance 4: (x0, x4) ... (x3, x7).
            (low, high) = ordered(low, high, ascending: ascending)
            // Distance 2: (x0, x2), (x1, x3), (x4, x6), (x5, x7).
            var (a, b) = ordered(SIMD4(low[0], low[1], high[0], high[1]), SIMD4(low[2], low[3], high[2], high[3]),
                                 ascending: ascending)
            low = SIMD4(a[0], a[1], b[0], b[1])
            high = SIMD4(a[2], a[3], b[2], b[3])
            // Distance 1: (x0, x1), (x2, x3), (x4, x5), (x6, x7).
            (a, b) = ordered(SIMD4(low[0], low[2], high[0], high[2]), SIMD4(low[1], low[3], high[1], high[3]),
                             ascending: ascending)
            words.storeBytes(of: SIMD4(a[0], b[0], a[1], b[1]), as: SIMD4<UInt32>.self)
            words.storeBytes(of: SIMD4(a[2], b[2], a[3], b[3]), toByteOffset: 16, as: SIMD4<UInt32>.self)
        }
    }

    /// low[i] takes the smaller of low[i] and high[i], high[i] the larger.
    @inline(never)
    private static func exchange(low: UnsafeMutablePointer<UInt32>, high: UnsafeMutablePointer<UInt32>, _ count: Int) {
        for i in 0..<count { (low[i], high[i]) = ordered(low[i], high[i], ascending: true) }
    }

    /// (min, max) of a and b, or (max, min), by a mask from the borrow of b - a (Hacker's
    /// Delight's formula), never by a branch on the words; the direction is public.
    @inline(__always)
    private static func ordered(_ a: UInt32, _ b: UInt32, ascending: Bool) -> (UInt32, UInt32) {
        let greater = 0 &- ((((~b) & a) | (((~b) | a) & (b &- a))) >> 31)
        let difference = greater & (a ^ b)
        return ascending ? (a ^ difference, b ^ difference) : (b ^ difference, a ^ difference)
    }

    /// The same, lane by lane.
    @inline(__always)
    private static func ordered(_ a: SIMD4<UInt32>, _ b: SIMD4<UInt32>, ascending: Bool) -> (SIMD4<UInt32>, SIMD4<UInt32>) {
        let greater = 0 &- ((((~b) & a) | (((~b) | a) & (b &- a))) &>> 31)
        let difference = greater & (a ^ b)
        return ascending ? (a ^ difference, b ^ difference) : (b ^ difference, a ^ difference)
    }
}

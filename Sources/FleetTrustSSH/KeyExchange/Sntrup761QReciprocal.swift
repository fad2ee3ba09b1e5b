#if arch(x86_64)
import CSntrup761AVX2
#endif

/// 1/(3·f) in R/q: the constant-time extended GCD of Bernstein and Yang ("safegcd") run on the
/// reversed polynomials for the specification's fixed 2p - 1 division steps. After them, delta
/// is 0 exactly when f is invertible, and v scaled by 1/f0 is the reversed reciprocal (r starts
/// as 1/3, which divides by 3 on the way).
///
/// It is most of a key pair's cost, so each step's p + 1 coefficient updates
/// (f0·g - g0·f, then the same on r and v) are written for 16-bit lanes: a product a·x mod q is
/// a·x - q·⌊a'·x / 2^16⌋ with a' ≈ a·2^16/q worked out once per step (Shoup's method), all in
/// wrapping 16-bit arithmetic that the compiler vectorises with SSE2's 16-bit multiplies.
/// Coefficients stay loosely reduced (within 5400 of zero, see `combine`); only f0 and g0 are
/// centred each step, as the swap test and the multipliers need, and v once at the end. The
/// values are those of the plain `%` arithmetic mod q, so the bytes are too; what changes is
/// speed. Every step touches the same coefficients in the same order whatever f is; swaps are
/// masks. Where the CPU has AVX2 (`Sntrup761KernelPath`), `eliminate` and `select` run in C
/// over sixteen lanes with the same 16-bit operations; they then also run past the count, up to
/// the next multiple of 16, over entries that are zeros and stay zeros.
enum Sntrup761QReciprocal {
    // Literals, not `Sntrup761Ring`'s: constants the compiler sees in this file, folded into the
    // vector loops even when files are compiled one at a time.
    private static let p = 761
    private static let q: Int16 = 4591
    /// Coefficients per polynomial: p + 1 used, the rest zeros that stay zeros (room for the
    /// AVX2 loops' last sixteen lanes, reading from the second entry on).
    private static let stride = 776

    /// The input's coefficients centred (within (q-1)/2 of zero), as a small polynomial's are.
    static func reciprocalOfThreeTimes(_ input: [Int16]) -> [Int16]? {
        precondition(input.count == p, "an R/q element has p coefficients")
        var buffer = [Int16](repeating: 0, count: 6 * stride)
        let path = Sntrup761KernelPath.current
        let (f0, delta, vOffset) = buffer.withUnsafeMutableBufferPointer { buffer -> (Int16, Int32, Int) in
            let base = buffer.baseAddress!
            let f = base, v = base + 2 * stride
            var g = base + stride, r = base + 3 * stride
            // Each elimination writes a fresh buffer and the pointers trade places (the same
            // trade every step): an output apart from its inputs lets the loop be vectorised.
            var nextG = base + 4 * stride, nextR = base + 5 * stride
            f[0] = 1
            f[p - 1] = -1
            f[p] = -1
            for i in 0..<p { g[p - 1 - i] = input[i] }
            r[0] = Sntrup761Ring.reciprocalQ(3)
            var delta: Int32 = 1
            for step in 0..<(2 * p - 1) {
                // v and r have degree at most step + 1 so far: the rest of them is zeros.
                let used = min(step + 1, p)
                (v + 1).update(from: v, count: used)
                v[0] = 0
                let swap = Int16(truncatingIfNeeded: Sntrup761Ring.negativeMask(-delta)
                    & Sntrup761Ring.nonzeroMask(Int32(Sntrup761Ring.freezeQ(Int32(g[0])))))
                delta ^= Int32(swap) & (delta ^ -delta)
                delta += 1
                // After the exchange g becomes (f0'·g' - g0'·f')/x and r becomes f0'·r' - g0'·v'.
                // With the exchange that is the negative of the same expression on the
                // unexchanged polynomials, so the multipliers take the sign and only f and v
                // (which survive the step) are exchanged, one-sidedly.
                let a = negated(Sntrup761Ring.freezeQ(Int32(f[0])), swap)
                let b = negated(Sntrup761Ring.freezeQ(Int32(g[0])), swap)
                let aShoup = shoup(a), bShoup = shoup(b)
                eliminate(nextG, g + 1, a, aShoup, f + 1, b, bShoup, count: p, path)
                nextG[p] = 0
                eliminate(nextR, r, a, aShoup, v, b, bShoup, count: used + 1, path)
                select(f, g, p + 1, swap, path)
                select(v, r, used + 1, swap, path)
                (g, nextG) = (nextG, g)
                (r, nextR) = (nextR, r)
            }
            return (Sntrup761Ring.freezeQ(Int32(f[0])), delta, v - base)
        }
        guard delta == 0 else { return nil }
        let scale = Int32(Sntrup761Ring.reciprocalQ(f0))
        return (0..<p).map { Sntrup761Ring.freezeQ(scale &* Int32(buffer[vOffset + p - 1 - $0])) }
    }

    /// a takes b's entries where the mask is all ones and keeps its own where it is zero.
    @inline(never)
    private static func select(_ a: UnsafeMutablePointer<Int16>, _ b: UnsafePointer<Int16>, _ count: Int, _ mask: Int16,
                               _ path: Sntrup761KernelPath) {
        #if arch(x86_64)
        if path == .avx2 { return fleettrust_sntrup761_avx2_select(a, b, count, mask) }
        #endif
        for i in 0..<count { a[i] ^= mask & (a[i] ^ b[i]) }
    }

    /// -x where the mask is all ones, x where it is zero.
    @inline(__always)
    private static func negated(_ x: Int16, _ mask: Int16) -> Int16 { (x ^ mask) &- mask }

    /// out = a·x - b·y mod q over count entries; out apart from x and y. Kept out of line, the
    /// loop compiles to 16-bit high and low multiplies over eight lanes.
    @inline(never)
    private static func eliminate(_ out: UnsafeMutablePointer<Int16>, _ x: UnsafePointer<Int16>, _ a: Int16, _ aShoup: Int16,
                                  _ y: UnsafePointer<Int16>, _ b: Int16, _ bShoup: Int16, count: Int,
                                  _ path: Sntrup761KernelPath) {
        #if arch(x86_64)
        if path == .avx2 { return fleettrust_sntrup761_avx2_eliminate(out, x, a, aShoup, y, b, bShoup, count) }
        #endif
        for i in 0..<count { out[i] = combine(x[i], a, aShoup, y[i], b, bShoup) }
    }

    /// a·2^16/q rounded, for a centred a: within 1 of the exact value, and below 2^15 in
    /// magnitude. A multiplication by 2^31/q rounded (467759) and a shift, never a division:
    /// a is secret, and a division instruction's time can depend on its operands.
    @inline(__always)
    static func shoup(_ a: Int16) -> Int16 {
        Int16(truncatingIfNeeded: (Int32(a) &* 467_759 &+ (1 << 14)) >> 15)
    }

    /// a·x mod q, for a centred a and |x| ≤ 5400, as a representative in -380 ..< q + 380: a'
    /// is within 1 of a·2^16/q, so the quotient estimate is off by less than 5400/2^16 before
    /// rounding down, and the remainder below 2^15 in magnitude is exact in 16 bits.
    @inline(__always)
    static func product(_ x: Int16, _ a: Int16, _ aShoup: Int16) -> Int16 {
        let estimate = Int16(truncatingIfNeeded: (Int32(x) &* Int32(aShoup)) >> 16)
        return x &* a &- estimate &* q
    }

    /// a·x - b·y mod q, loosely reduced: for |x|, |y| ≤ 5400 the difference of two products is
    /// within q + 760 = 5351 of zero, so the bound holds step after step without a correction.
    @inline(__always)
    static func combine(_ x: Int16, _ a: Int16, _ aShoup: Int16, _ y: Int16, _ b: Int16, _ bShoup: Int16) -> Int16 {
        product(x, a, aShoup) &- product(y, b, bShoup)
    }
}

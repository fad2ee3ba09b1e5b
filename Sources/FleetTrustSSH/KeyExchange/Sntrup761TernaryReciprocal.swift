/// 1/g in R/3 by the same constant-time division steps as `Sntrup761Ring.reciprocalOfThreeTimes`,
/// but bitsliced: a coefficient in {-1, 0, 1} is one bit of a "nonzero" plane and one bit of a
/// "negative" plane, so the p + 1 = 762 coefficients of a polynomial are 12 words of each, and a
/// division step is a few boolean operations on 12 words instead of 762 reductions mod 3.
///
/// Key generation draws g until it is invertible, so this runs once or more per key pair; the
/// plain per-coefficient loop was about a third of a key pair's cost. The words are touched in
/// the same order whatever g is, and every choice (swap or not, subtract f or -f or nothing) is
/// a mask, never a branch or an index: the time says nothing about g.
///
/// A coefficient's negative bit is meaningless while its nonzero bit is 0; the formulas below
/// never read it then, except through a mask that the nonzero bit clears.
enum Sntrup761TernaryReciprocal {
    /// Words per plane: 64 · 12 = 768 ≥ p + 1 bits; the bits from p + 1 on stay 0.
    private static let words = 12
    private static let p = Sntrup761Ring.p
    /// Bits of the last word that hold coefficients (p + 1 = 762 = 11 · 64 + 58).
    private static let lastWordMask: UInt64 = (1 << UInt64(Sntrup761Ring.p + 1 - 64 * 11)) - 1

    /// 1/g in R/3, nil when g is not invertible there.
    static func reciprocal(_ g: [Int8]) -> [Int8]? {
        precondition(g.count == p, "an R/3 element has p coefficients")
        // Eight planes: f, g, v, r (nonzero plane, then negative plane each).
        var planes = [UInt64](repeating: 0, count: 8 * words)
        let (f0Negative, delta) = planes.withUnsafeMutableBufferPointer { buffer -> (UInt64, Int32) in
            let base = buffer.baseAddress!
            let fN = base, fS = base + words, gN = base + 2 * words, gS = base + 3 * words
            let vN = base + 4 * words, vS = base + 5 * words, rN = base + 6 * words, rS = base + 7 * words
            // f = x^p - x - 1 reversed: 1 at 0, -1 at p - 1 and p.
            set(fN, fS, 0, 1)
            set(fN, fS, p - 1, -1)
            set(fN, fS, p, -1)
            for i in 0..<p { set(gN, gS, p - 1 - i, g[i]) }
            set(rN, rS, 0, 1)
            var delta: Int32 = 1
            for _ in 0..<(2 * p - 1) {
                shiftUp(vN)
                shiftUp(vS)
                let swap = UInt64(bitPattern: Int64(Sntrup761Ring.negativeMask(-delta) & -Int32(truncatingIfNeeded: gN[0] & 1)))
                delta ^= Int32(truncatingIfNeeded: Int64(bitPattern: swap)) & (delta ^ -delta)
                delta += 1
                swapPlanes(fN, gN, swap)
                swapPlanes(fS, gS, swap)
                swapPlanes(vN, rN, swap)
                swapPlanes(vS, rS, swap)
                // c = g0·f0 (f0 is ±1): g ← (g - c·f)/x and r ← r - c·v.
                let cNonzero = 0 &- (gN[0] & 1)
                let cNegative = 0 &- ((gS[0] ^ fS[0]) & 1)
                subtractMultiple(gN, gS, fN, fS, cNonzero, cNegative)
                shiftDown(gN)
                shiftDown(gS)
                subtractMultiple(rN, rS, vN, vS, cNonzero, cNegative)
            }
            return (0 &- (fS[0] & 1), delta)
        }
        guard delta == 0 else { return nil }
        // 1/g = f0 · v reversed (f0 = ±1 is its own inverse).
        return (0..<p).map { index in
            let bit = p - 1 - index
            let nonzero = Int8(truncatingIfNeeded: (planes[4 * words + (bit >> 6)] >> UInt64(bit & 63)) & 1)
            let negative = Int8(truncatingIfNeeded: ((planes[5 * words + (bit >> 6)] ^ f0Negative) >> UInt64(bit & 63)) & 1)
            return nonzero * (1 - 2 * negative)
        }
    }

    private static func set(_ nonzero: UnsafeMutablePointer<UInt64>, _ negative: UnsafeMutablePointer<UInt64>,
                            _ index: Int, _ value: Int8) {
        let shift = UInt64(index & 63)
        nonzero[index >> 6] |= UInt64(UInt8(bitPattern: value) & 1) << shift
        negative[index >> 6] |= UInt64(UInt8(bitPattern: value) >> 7) << shift
    }

    /// x · a, dropping the coefficient pushed past p.
    @inline(__always)
    private static func shiftUp(_ a: UnsafeMutablePointer<UInt64>) {
        for k in stride(from: words - 1, to: 0, by: -1) { a[k] = (a[k] << 1) | (a[k - 1] >> 63) }
        a[0] <<= 1
        a[words - 1] &= lastWordMask
    }

    /// a / x, a's constant term dropped (it is zero when this is called on g after elimination).
    @inline(__always)
    private static func shiftDown(_ a: UnsafeMutablePointer<UInt64>) {
        for k in 0..<(words - 1) { a[k] = (a[k] >> 1) | (a[k + 1] << 63) }
        a[words - 1] >>= 1
    }

    @inline(__always)
    private static func swapPlanes(_ a: UnsafeMutablePointer<UInt64>, _ b: UnsafeMutablePointer<UInt64>, _ mask: UInt64) {
        for k in 0..<words {
            let t = mask & (a[k] ^ b[k])
            a[k] ^= t
            b[k] ^= t
        }
    }

    /// x ← x - c·y coefficientwise mod 3, c given as masks (all ones or all zeros).
    /// Adding y' = -c·y: both nonzero with the same sign gives the opposite sign (1 + 1 = -1),
    /// with opposite signs 0; otherwise the nonzero one.
    @inline(__always)
    private static func subtractMultiple(_ xN: UnsafeMutablePointer<UInt64>, _ xS: UnsafeMutablePointer<UInt64>,
                                         _ yN: UnsafeMutablePointer<UInt64>, _ yS: UnsafeMutablePointer<UInt64>,
                                         _ cNonzero: UInt64, _ cNegative: UInt64) {
        for k in 0..<words {
            let n = xN[k], s = xS[k]
            let addendN = yN[k] & cNonzero
            let addendS = ~(yS[k] ^ cNegative)
            xN[k] = (n ^ addendN) | (n & addendN & ~(s ^ addendS))
            xS[k] = addendS ^ (n & (s ^ addendS ^ addendN))
        }
    }
}

/// Arithmetic in the two rings of Streamlined NTRU Prime sntrup761: R/q = (Z/q)[x]/(x^p - x - 1)
/// and R/3 = (Z/3)[x]/(x^p - x - 1), with p = 761 and q = 4591.
///
/// Coefficients are kept centred, as the specification keeps them: elements of Z/q as
/// -(q-1)/2 ... (q-1)/2 in `Int16`, elements of Z/3 as -1, 0, 1 in `Int8`, so that a small
/// polynomial is also a polynomial mod q without conversion. The reciprocals run the
/// specification's fixed number of division steps (2p - 1) with masks instead of branches, so
/// their time does not depend on the secret polynomial they invert.
enum Sntrup761Ring {
    static let p = 761
    static let q: Int32 = 4591
    static let halfQ: Int32 = (q - 1) / 2
    /// The number of nonzero coefficients of a short polynomial.
    static let weight = 286

    /// x reduced into -(q-1)/2 ... (q-1)/2; valid for |x| < 2^24 (the offset keeps the dividend positive).
    @inline(__always)
    static func freezeQ(_ x: Int32) -> Int16 {
        let shifted = UInt32(bitPattern: x &+ halfQ &+ q &* 4096)
        return Int16(truncatingIfNeeded: Int32(bitPattern: shifted % UInt32(q)) &- halfQ)
    }

    /// x reduced into -1 ... 1; valid for |x| < 2^24.
    @inline(__always)
    static func freeze3(_ x: Int32) -> Int8 {
        let shifted = UInt32(bitPattern: x &+ 1 &+ 3 &* (1 << 23))
        return Int8(truncatingIfNeeded: Int32(bitPattern: shifted % 3) &- 1)
    }

    /// -1 when x is nonzero, else 0, without a branch.
    @inline(__always)
    static func nonzeroMask(_ x: Int32) -> Int32 {
        -Int32(bitPattern: (0 &- UInt32(bitPattern: x) | UInt32(bitPattern: x)) >> 31)
    }

    /// -1 when x is negative, else 0, without a branch.
    @inline(__always)
    static func negativeMask(_ x: Int32) -> Int32 { x >> 31 }

    /// a^(q-2) = 1/a in Z/q (a nonzero).
    static func reciprocalQ(_ a: Int16) -> Int16 {
        var result: Int16 = 1
        var base = a
        var exponent = q - 2
        while exponent > 0 {
            if exponent & 1 == 1 { result = freezeQ(Int32(result) * Int32(base)) }
            base = freezeQ(Int32(base) * Int32(base))
            exponent >>= 1
        }
        return result
    }

    /// f·g in R/q, g small.
    static func multiply(_ f: [Int16], small g: [Int8]) -> [Int16] {
        reducedProduct(f.map(Int32.init), g).map(freezeQ)
    }

    /// f·g in R/3.
    static func multiply3(_ f: [Int8], _ g: [Int8]) -> [Int8] {
        reducedProduct(f.map(Int32.init), g).map(freeze3)
    }

    /// f·g over the integers, folded back below degree p with x^p = x + 1; with |f| ≤ (q-1)/2
    /// the sums stay below 3·p·(q-1)/2 in magnitude, inside what the freezes accept. g's
    /// coefficients are -1, 0 or 1: each term is f itself, masked and conditionally negated,
    /// which SSE2 does four lanes at a time where a 32-bit multiply it has not.
    private static func reducedProduct(_ f: [Int32], _ g: [Int8]) -> [Int32] {
        var wide = [Int32](repeating: 0, count: 2 * p - 1)
        wide.withUnsafeMutableBufferPointer { product in
            f.withUnsafeBufferPointer { f in
                g.withUnsafeBufferPointer { g in
                    for j in 0..<p {
                        let nonzero = -Int32(g[j] & 1)
                        let negative = Int32(g[j] >> 7)
                        let row = product.baseAddress! + j
                        for i in 0..<p { row[i] &+= ((f[i] & nonzero) ^ negative) &- negative }
                    }
                }
            }
            for k in stride(from: 2 * p - 2, through: p, by: -1) {
                product[k - p] &+= product[k]
                product[k - p + 1] &+= product[k]
            }
        }
        return Array(wide[0..<p])
    }

    /// 1/g in R/3, nil when g is not invertible there.
    static func reciprocal3(_ g: [Int8]) -> [Int8]? {
        Sntrup761TernaryReciprocal.reciprocal(g)
    }

    /// 1/(3·f) in R/q for a small f, nil when it is not invertible (never, for x^p - x - 1 is
    /// irreducible mod q, unless f is zero).
    static func reciprocalOfThreeTimes(_ f: [Int8]) -> [Int16]? {
        Sntrup761QReciprocal.reciprocalOfThreeTimes(f)
    }
}

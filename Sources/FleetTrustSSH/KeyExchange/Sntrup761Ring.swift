/// Arithmetic in the two rings of Streamlined NTRU Prime sntrup761: R/q = (Z/q)[x]/(x^p - x - 1)
/// and R/3 = (Z/3)[x]/(x^p - x - 1), with p = 761 and q = 4591.
///
/// Coefficients are kept centred, as the specification keeps them: elements of Z/q as
/// -(q-1)/2 ... (q-1)/2 in `Int16`, elements of Z/3 as -1, 0, 1 in `Int8`, so that a small
/// polynomial is also a polynomial mod q without conversion. The reciprocals
/// (`Sntrup761TernaryReciprocal`, `Sntrup761QReciprocal`) run the specification's fixed number
/// of division steps (2p - 1) with masks instead of branches, so their time does not depend on
/// the secret polynomial they invert.
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
        // 14 terms of at most (q-1)/2 = 2295 each stay below 2^15.
        reducedProduct(f, g, rowsPerBlock: 14).map(freezeQ)
    }

    /// f·g in R/3.
    static func multiply3(_ f: [Int8], _ g: [Int8]) -> [Int8] {
        // All p terms of at most 1 each fit 16 bits.
        reducedProduct(f.map(Int16.init), g, rowsPerBlock: p).map(freeze3)
    }

    /// f·g over the integers, folded back below degree p with x^p = x + 1; with |f| ≤ (q-1)/2
    /// the sums stay below 3·p·(q-1)/2 in magnitude, inside what the freezes accept.
    ///
    /// g's coefficients are -1, 0 or 1, so each term is f itself, masked and conditionally
    /// negated (no multiply, no branch on g). The terms add up in 16-bit lanes, eight to an SSE2
    /// register, for as many rows of g as cannot overflow them, and each block of rows is then
    /// added into the 32-bit sums.
    private static func reducedProduct(_ f: [Int16], _ g: [Int8], rowsPerBlock: Int) -> [Int32] {
        var wide = [Int32](repeating: 0, count: 2 * p - 1)
        var block = [Int16](repeating: 0, count: rowsPerBlock + p - 1)
        wide.withUnsafeMutableBufferPointer { product in
            block.withUnsafeMutableBufferPointer { block in
                f.withUnsafeBufferPointer { f in
                    var first = 0
                    while first < p {
                        let rows = min(rowsPerBlock, p - first)
                        block.update(repeating: 0)
                        for row in 0..<rows {
                            let coefficient = g[first + row]
                            addRow(block.baseAddress! + row, f.baseAddress!, p,
                                   nonzero: -Int16(coefficient & 1), negative: Int16(coefficient >> 7))
                        }
                        widen(product.baseAddress! + first, block.baseAddress!, rows + p - 1)
                        first += rows
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

    /// sums += f·c for c given as masks (nonzero: all ones for ±1; negative: all ones for -1).
    /// Out of line, with pointers apart, so the loop is vectorised.
    @inline(never)
    private static func addRow(_ sums: UnsafeMutablePointer<Int16>, _ f: UnsafePointer<Int16>, _ count: Int,
                               nonzero: Int16, negative: Int16) {
        for i in 0..<count { sums[i] &+= ((f[i] & nonzero) ^ negative) &- negative }
    }

    @inline(never)
    private static func widen(_ sums: UnsafeMutablePointer<Int32>, _ block: UnsafePointer<Int16>, _ count: Int) {
        for i in 0..<count { sums[i] &+= Int32(block[i]) }
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

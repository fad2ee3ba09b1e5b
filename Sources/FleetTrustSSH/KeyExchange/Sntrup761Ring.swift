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
        // 12 terms of at most (q-1)/2 = 2295 each stay below 2^15.
        let g = g.map(Int16.init) + [0, 0, 0]
        return reducedProduct(f, rowsPerCall: 4, rowsPerBlock: 12) { sums, f, row in
            addRows(sums, f, p + 3, g[row], g[row + 1], g[row + 2], g[row + 3])
        }.map(freezeQ)
    }

    /// f·g in R/q for any two centred elements: the batch key generation's products of a
    /// reciprocal by a product of many small polynomials.
    static func multiply(_ f: [Int16], _ g: [Int16]) -> [Int16] {
        // Two rows at a time: a·f[i] - b·f[i - 1] with b = -g[row + 1] lies within 5351 of zero
        // (`Sntrup761QReciprocal.combine`), so six pairs stay below 2^15.
        let g = g + [0]
        return reducedProduct(f, rowsPerCall: 2, rowsPerBlock: 12) { sums, f, row in
            let a = g[row], b = -g[row + 1]
            Sntrup761QReciprocal.addProductRows(sums, f + 1, a, Sntrup761QReciprocal.shoup(a),
                                                f, b, Sntrup761QReciprocal.shoup(b), count: p + 1)
        }.map(freezeQ)
    }

    /// f·g in R/3.
    static func multiply3(_ f: [Int8], _ g: [Int8]) -> [Int8] {
        // All p terms of at most 1 each fit 16 bits.
        let g = g.map(Int16.init) + [0, 0, 0]
        return reducedProduct(f.map(Int16.init), rowsPerCall: 4, rowsPerBlock: p + 3) { sums, f, row in
            addRows(sums, f, p + 3, g[row], g[row + 1], g[row + 2], g[row + 3])
        }.map(freeze3)
    }

    /// f·g over the integers, folded back below degree p with x^p = x + 1. `addRows` adds f
    /// times `rowsPerCall` coefficients of g, from `row` on, into 16-bit sums, reading f from a
    /// copy with rowsPerCall - 1 zeros on either side (its first coefficient at that offset).
    /// The sums stay below 381·5351 (full products) or p·(q-1)/2 (small ones) in magnitude,
    /// and folded below 2^24, inside what the freezes accept.
    ///
    /// The terms add up in 16-bit lanes, eight to an SSE2 register, for as many rows of g as
    /// cannot overflow them, and each block of rows is then added into the 32-bit sums.
    private static func reducedProduct(_ f: [Int16], rowsPerCall: Int, rowsPerBlock: Int,
                                       addRows: (UnsafeMutablePointer<Int16>, UnsafePointer<Int16>, Int) -> Void) -> [Int32] {
        let rows = (p + rowsPerCall - 1) / rowsPerCall * rowsPerCall
        let zeros = [Int16](repeating: 0, count: rowsPerCall - 1)
        let padded = zeros + f + zeros
        var wide = [Int32](repeating: 0, count: rows + p - 1)
        var block = [Int16](repeating: 0, count: rowsPerBlock + p - 1)
        wide.withUnsafeMutableBufferPointer { product in
            block.withUnsafeMutableBufferPointer { block in
                padded.withUnsafeBufferPointer { f in
                    var first = 0
                    while first < rows {
                        let count = min(rowsPerBlock, rows - first)
                        block.update(repeating: 0)
                        for row in stride(from: 0, to: count, by: rowsPerCall) {
                            addRows(block.baseAddress! + row, f.baseAddress!, first + row)
                        }
                        widen(product.baseAddress! + first, block.baseAddress!, count + p - 1)
                        first += count
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

    /// sums[i] += c0·f[i] + c1·f[i-1] + c2·f[i-2] + c3·f[i-3]: four rows of a product by a
    /// small polynomial, f read from three zeros before it. A 16-bit multiplication takes the
    /// same time whatever its operands; out of line, with pointers apart, the loop is
    /// vectorised (`pmullw`), four rows to one pass over the sums.
    @inline(never)
    private static func addRows(_ sums: UnsafeMutablePointer<Int16>, _ f: UnsafePointer<Int16>, _ count: Int,
                                _ c0: Int16, _ c1: Int16, _ c2: Int16, _ c3: Int16) {
        for i in 0..<count { sums[i] &+= f[i + 3] &* c0 &+ f[i + 2] &* c1 &+ f[i + 1] &* c2 &+ f[i] &* c3 }
    }

    @inline(never)
    private static func widen(_ sums: UnsafeMutablePointer<Int32>, _ block: UnsafePointer<Int16>, _ count: Int) {
        for i in 0..<count { sums[i] &+= Int32(block[i]) }
    }

    /// 1/g in R/3, nil when g is not invertible there.
    static func reciprocal3(_ g: [Int8]) -> [Int8]? {
        Sntrup761TernaryReciprocal.reciprocal(g)
    }

    /// 1/(3·f) in R/q for a centred f, nil when it is not invertible (never, for x^p - x - 1 is
    /// irreducible mod q, unless f is zero).
    static func reciprocalOfThreeTimes(_ f: [Int16]) -> [Int16]? {
        Sntrup761QReciprocal.reciprocalOfThreeTimes(f)
    }
}

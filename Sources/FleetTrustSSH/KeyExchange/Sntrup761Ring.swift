#if arch(x86_64)
import CSntrup761AVX2
#endif

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

    /// x reduced into -(q-1)/2 ... (q-1)/2; valid for |x| < 2^40. A remainder by a constant,
    /// which the compiler turns into a multiplication, never a division.
    @inline(__always)
    static func freezeQ(wide x: Int64) -> Int16 {
        let shifted = UInt64(bitPattern: x &+ Int64(halfQ) &+ Int64(q) &<< 40)
        return Int16(truncatingIfNeeded: Int64(bitPattern: shifted % UInt64(q)) &- Int64(halfQ))
    }

    /// f·g in R/q, g small: the integer product is at most 761·2295 < 2^21 in magnitude, and
    /// at most three times that once folded, inside what `freezeQ` accepts.
    static func multiply(_ f: [Int16], small g: [Int8]) -> [Int16] {
        let product = Sntrup761Karatsuba.product(f, g.map(Int16.init))
        #if arch(x86_64)
        if Sntrup761KernelPath.current == .avx2 { return foldedAndCentred(product, fleettrust_sntrup761_avx2_fold_centre_q) }
        #endif
        return folded(product).map { freezeQ($0) }
    }

    /// f·g in R/q for any two centred elements: the batch key generation's products of a
    /// reciprocal by a product of many small polynomials. The integer product would not fit in
    /// 32 bits, so g is split as 2048·high + low, high in -1 ... 1 and low in -1024 ..< 1024:
    /// two products that do (at most 761·2295·1024 < 2^31), joined and folded in 64 bits.
    static func multiply(_ f: [Int16], _ g: [Int16]) -> [Int16] {
        let low = g.map { (($0 &+ 1024) & 2047) &- 1024 }
        let high = zip(g, low).map { ($0 &- $1) >> 11 }
        let lowProduct = Sntrup761Karatsuba.product(f, low), highProduct = Sntrup761Karatsuba.product(f, high)
        let joined = (0..<(2 * p - 1)).map { Int64(highProduct[$0]) &<< 11 &+ Int64(lowProduct[$0]) }
        return folded(joined).map { freezeQ(wide: $0) }
    }

    /// f·g in R/3: the integer product is at most 761 in magnitude.
    static func multiply3(_ f: [Int8], _ g: [Int8]) -> [Int8] {
        let product = Sntrup761Karatsuba.product(f.map(Int16.init), g.map(Int16.init))
        #if arch(x86_64)
        if Sntrup761KernelPath.current == .avx2 { return foldedAndCentred(product, fleettrust_sntrup761_avx2_fold_centre_3) }
        #endif
        return folded(product).map(freeze3)
    }

    #if arch(x86_64)
    /// The AVX2 path's fold and reduction in one pass (`CSntrup761AVX2`), to the same centred
    /// representatives as `folded` and `freezeQ` or `freeze3`.
    private static func foldedAndCentred<Coefficient: FixedWidthInteger>(
        _ product: [Int32], _ kernel: (UnsafeMutablePointer<Coefficient>, UnsafeMutablePointer<Int32>) -> Void
    ) -> [Coefficient] {
        var product = product
        var out = [Coefficient](repeating: 0, count: Sntrup761Karatsuba.size)
        out.withUnsafeMutableBufferPointer { out in
            product.withUnsafeMutableBufferPointer { kernel(out.baseAddress!, $0.baseAddress!) }
        }
        return Array(out[0..<p])
    }
    #endif

    /// An integer product (at least 2p - 1 coefficients) folded below degree p with x^p = x + 1.
    /// Coefficient k ≥ p adds into k - p and k - p + 1, both below p, so no folded coefficient
    /// is folded again and the loops run over the buffer in any order (vectorised).
    private static func folded<Coefficient: FixedWidthInteger>(_ product: [Coefficient]) -> ArraySlice<Coefficient> {
        var product = product
        product.withUnsafeMutableBufferPointer { product in
            let high = product.baseAddress! + p
            for k in 0..<(p - 1) { product[k] &+= high[k] }
            for k in 0..<(p - 1) { product[k + 1] &+= high[k] }
        }
        return product[0..<p]
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

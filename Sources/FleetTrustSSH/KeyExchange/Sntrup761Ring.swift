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
    /// the sums stay below 3·p·(q-1)/2 in magnitude, inside what the freezes accept.
    private static func reducedProduct(_ f: [Int32], _ g: [Int8]) -> [Int32] {
        var wide = [Int32](repeating: 0, count: 2 * p - 1)
        wide.withUnsafeMutableBufferPointer { product in
            f.withUnsafeBufferPointer { f in
                g.withUnsafeBufferPointer { g in
                    for j in 0..<p {
                        let factor = Int32(g[j])
                        for i in 0..<p { product[i &+ j] &+= f[i] &* factor }
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
        let (f0, v, delta) = divisionSteps(of: g.map(Int16.init), field: Field3.self)
        guard delta == 0 else { return nil }
        return (0..<p).map { Int8(truncatingIfNeeded: f0 * v[p - 1 - $0]) }
    }

    /// 1/(3·f) in R/q for a small f, nil when it is not invertible (never, for x^p - x - 1 is
    /// irreducible mod q, unless f is zero).
    static func reciprocalOfThreeTimes(_ f: [Int8]) -> [Int16]? {
        let (f0, v, delta) = divisionSteps(of: f.map(Int16.init), field: FieldQ.self)
        guard delta == 0 else { return nil }
        let scale = Int32(reciprocalQ(f0))
        return (0..<p).map { freezeQ(scale &* Int32(v[p - 1 - $0])) }
    }

    /// The constant-time extended GCD of Bernstein and Yang ("safegcd") over a field, run on
    /// the reversed polynomials: after 2p - 1 steps, delta is 0 exactly when the input is
    /// invertible, and v (scaled by 1/f0) is the reversed reciprocal times the start value of r.
    private static func divisionSteps<F: DivisionStepField>(of input: [Int16], field: F.Type)
        -> (f0: Int16, v: [Int16], delta: Int32) {
        var f = [Int16](repeating: 0, count: p + 1)
        var g = [Int16](repeating: 0, count: p + 1)
        var v = [Int16](repeating: 0, count: p + 1)
        var r = [Int16](repeating: 0, count: p + 1)
        f[0] = 1
        f[p - 1] = -1
        f[p] = -1
        for i in 0..<p { g[p - 1 - i] = input[i] }
        r[0] = F.reciprocalStart
        var delta: Int32 = 1
        f.withUnsafeMutableBufferPointer { f in
            g.withUnsafeMutableBufferPointer { g in
                v.withUnsafeMutableBufferPointer { v in
                    r.withUnsafeMutableBufferPointer { r in
                        for step in 0..<(2 * p - 1) {
                            // v and r have degree at most step + 1 so far: the rest of them is zeros.
                            let used = min(step + 1, p)
                            for i in stride(from: used, to: 0, by: -1) { v[i] = v[i &- 1] }
                            v[0] = 0
                            let swap = Int16(truncatingIfNeeded: negativeMask(-delta) & nonzeroMask(Int32(g[0])))
                            delta ^= Int32(swap) & (delta ^ -delta)
                            delta += 1
                            for i in 0...p {
                                let t = swap & (f[i] ^ g[i])
                                f[i] ^= t
                                g[i] ^= t
                            }
                            for i in 0...used {
                                let u = swap & (v[i] ^ r[i])
                                v[i] ^= u
                                r[i] ^= u
                            }
                            let (fScale, gScale) = F.eliminators(f0: Int32(f[0]), g0: Int32(g[0]))
                            for i in 0..<p { g[i] = F.freeze(fScale &* Int32(g[i &+ 1]) &- gScale &* Int32(f[i &+ 1])) }
                            g[p] = 0
                            for i in 0...used { r[i] = F.freeze(fScale &* Int32(r[i]) &- gScale &* Int32(v[i])) }
                        }
                    }
                }
            }
        }
        return (f[0], Array(v[0..<p]), delta)
    }
}

/// What a division step needs from the coefficient field: how to reduce, which multiples of f
/// and g cancel g's constant term, and what r starts as (1, or 1/3 to divide by 3 on the way).
private protocol DivisionStepField {
    static var reciprocalStart: Int16 { get }
    static func freeze(_ x: Int32) -> Int16
    static func eliminators(f0: Int32, g0: Int32) -> (Int32, Int32)
}

private enum Field3: DivisionStepField {
    static let reciprocalStart: Int16 = 1
    /// Inside the division steps every sum lies in -2 ... 2: ±3 for the ends, without a division.
    @inline(__always) static func freeze(_ x: Int32) -> Int16 {
        Int16(truncatingIfNeeded: x &- (3 & ((1 &- x) >> 31)) &+ (3 & ((x &+ 1) >> 31)))
    }
    /// f0 is ±1, its own inverse: g - g0·f0·f.
    @inline(__always) static func eliminators(f0: Int32, g0: Int32) -> (Int32, Int32) { (1, g0 &* f0) }
}

private enum FieldQ: DivisionStepField {
    static let reciprocalStart: Int16 = Sntrup761Ring.reciprocalQ(3)
    @inline(__always) static func freeze(_ x: Int32) -> Int16 { Sntrup761Ring.freezeQ(x) }
    /// f0·g - g0·f: no division inside the loop; the result is scaled by 1/f0 once at the end.
    @inline(__always) static func eliminators(f0: Int32, g0: Int32) -> (Int32, Int32) { (f0, g0) }
}

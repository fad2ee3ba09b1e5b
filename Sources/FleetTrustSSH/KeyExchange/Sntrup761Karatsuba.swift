#if arch(x86_64)
import CSntrup761AVX2
#endif

/// Exact integer products of two polynomials of up to 768 coefficients (p = 761 padded), the
/// arithmetic under every sntrup761 product: three levels of Karatsuba over a base case that
/// multiplies with SSE2's `pmaddwd` (eight 16-bit products summed pairwise into four 32-bit
/// lanes in one instruction). This is the portable path; where the CPU has AVX2
/// (`Sntrup761KernelPath`), the same Karatsuba shape runs in C over sixteen lanes
/// (`vpmaddwd`), which makes the same sums and so the same product.
///
/// The products were most of a key pair's and a decapsulation's cost as a schoolbook of 16-bit
/// multiplies, widened to 32 bits every twelve rows. Karatsuba trades a quarter of the
/// multiplications per level for a few additions; `pmaddwd` adds its products in 32 bits, so no
/// sum is ever reduced or widened on the way and the result is the integer product, which the
/// callers fold and reduce mod q or mod 3 once.
///
/// Bounds (why the result is exact): each level adds two halves in 16 bits, so an operand's
/// coefficients must stay within 2^15/8 = 4095 for the base case's sums not to wrap. Every
/// other operation (products, sums and differences in 32-bit lanes) wraps mod 2^32, a ring
/// homomorphism from the integers, so the result is the integer product whenever that product's
/// coefficients fit in 32 bits: at most 761 terms of |a|·|b|, which the callers keep below 2^31
/// (2295 by 1 for a small polynomial, 2295 by 1024 for a full product's low part). Nothing here
/// branches or indexes on the values: the loops' bounds are the public sizes only.
enum Sntrup761Karatsuba {
    /// Coefficients of an operand: p rounded up to a multiple of 8 · 2^levels.
    static let size = 768
    /// Below this many coefficients the halves are multiplied directly.
    private static let baseSize = 96
    /// Zero pairs on either side of a base case's first operand: a group of sixteen outputs
    /// reads up to 14 pairs before it and 15 after it.
    private static let pairPadding = 16
    /// a·b over the integers: 2·size coefficients (the last one 0), a and b at most `size`
    /// coefficients each, every one within 4095 of zero, and their product's within 2^31.
    static func product(_ a: [Int16], _ b: [Int16]) -> [Int32] {
        precondition(a.count <= size && b.count <= size, "at most \(size) coefficients")
        let paddedA = a + [Int16](repeating: 0, count: size - a.count)
        let paddedB = b + [Int16](repeating: 0, count: size - b.count)
        var result = [Int32](repeating: 0, count: 2 * size)
        #if arch(x86_64)
        if Sntrup761KernelPath.current == .avx2 {
            result.withUnsafeMutableBufferPointer { result in
                paddedA.withUnsafeBufferPointer { a in
                    paddedB.withUnsafeBufferPointer { b in
                        fleettrust_sntrup761_avx2_product(result.baseAddress!, a.baseAddress!, b.baseAddress!)
                    }
                }
            }
            return result
        }
        #endif
        var halves = [Int16](repeating: 0, count: 2 * size)
        var middles = [Int32](repeating: 0, count: 2 * size)
        var pairs = [Int16](repeating: 0, count: 2 * (baseSize + 2 * pairPadding))
        var broadcast = [SIMD8<Int16>](repeating: .zero, count: baseSize / 2)
        result.withUnsafeMutableBufferPointer { result in
            halves.withUnsafeMutableBufferPointer { halves in
                middles.withUnsafeMutableBufferPointer { middles in
                    pairs.withUnsafeMutableBufferPointer { pairs in
                        broadcast.withUnsafeMutableBufferPointer { broadcast in
                            paddedA.withUnsafeBufferPointer { a in
                                paddedB.withUnsafeBufferPointer { b in
                                    let scratch = Scratch(halves: halves.baseAddress!, middles: middles.baseAddress!,
                                                          pairs: pairs.baseAddress!, broadcast: broadcast.baseAddress!)
                                    multiply(result.baseAddress!, a.baseAddress!, b.baseAddress!, size, scratch)
                                }
                            }
                        }
                    }
                }
            }
        }
        return result
    }

    /// Working memory for one product: sums of halves (16-bit) and middle products (32-bit),
    /// each level taking its part and handing the rest down; the base case's two tables.
    private struct Scratch {
        var halves: UnsafeMutablePointer<Int16>
        var middles: UnsafeMutablePointer<Int32>
        let pairs: UnsafeMutablePointer<Int16>
        let broadcast: UnsafeMutablePointer<SIMD8<Int16>>
    }

    /// out[0 ..< 2n] = a·b for n coefficients each: low halves, high halves, and the product of
    /// the sums less both, added in the middle.
    private static func multiply(_ out: UnsafeMutablePointer<Int32>, _ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>,
                                 _ n: Int, _ scratch: Scratch) {
        guard n > baseSize else { return schoolbook(out, a, b, n, scratch) }
        let half = n / 2
        multiply(out, a, b, half, scratch)
        multiply(out + n, a + half, b + half, half, scratch)
        let sumA = scratch.halves, sumB = scratch.halves + half, middle = scratch.middles
        addHalves(sumA, a, a + half, half)
        addHalves(sumB, b, b + half, half)
        var inner = scratch
        inner.halves += n
        inner.middles += n
        multiply(middle, sumA, sumB, half, inner)
        interpolate(out, middle, n)
    }

    @inline(never)
    private static func addHalves(_ sum: UnsafeMutablePointer<Int16>, _ low: UnsafePointer<Int16>, _ high: UnsafePointer<Int16>,
                                  _ count: Int) {
        for i in 0..<count { sum[i] = low[i] &+ high[i] }
    }

    /// Adds middle - low - high (each n coefficients) into the product at half = n/2, where
    /// it overlaps the upper half of low and the lower half of high: entry i of both quarters
    /// is worked out from the four quarters' entry i and the middle's, before any is written,
    /// so the overlap never feeds a result back in. Four 32-bit lanes at a time.
    @inline(never)
    private static func interpolate(_ product: UnsafeMutablePointer<Int32>, _ middle: UnsafePointer<Int32>, _ n: Int) {
        let half = n / 2
        var i = 0
        while i < half {
            let low0 = load(product + i), low1 = load(product + half + i)
            let high0 = load(product + n + i), high1 = load(product + n + half + i)
            let middle0 = load(middle + i), middle1 = load(middle + half + i)
            store(low1 &+ middle0 &- low0 &- high0, product + half + i)
            store(high0 &+ middle1 &- low1 &- high1, product + n + i)
            i += 4
        }
    }

    @inline(__always)
    private static func load(_ pointer: UnsafePointer<Int32>) -> SIMD4<Int32> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD4<Int32>.self)
    }

    @inline(__always)
    private static func store(_ value: SIMD4<Int32>, _ pointer: UnsafeMutablePointer<Int32>) {
        UnsafeMutableRawPointer(pointer).storeBytes(of: value, as: SIMD4<Int32>.self)
    }

    /// out[0 ..< 2n] = a·b, n a multiple of 16 and at most `baseSize`. With a's coefficients
    /// laid out as pairs (a[m], a[m - 1]) and b's as pairs (b[2t], b[2t + 1]) repeated four
    /// times, one `pmaddwd` adds a[k - 2t]·b[2t] + a[k - 2t - 1]·b[2t + 1] for four outputs k
    /// at once. Sixteen outputs at a time, in four independent sums, run over the pairs t that
    /// reach any of them, a range set by the outputs' position and n alone; the zero pairs on
    /// either side of a (`pairPadding`) stand for a's missing ends.
    @inline(never)
    private static func schoolbook(_ out: UnsafeMutablePointer<Int32>, _ a: UnsafePointer<Int16>, _ b: UnsafePointer<Int16>,
                                   _ n: Int, _ scratch: Scratch) {
        let pairs = scratch.pairs, broadcast = scratch.broadcast
        // Pair m is at 2·(m + pairPadding); the pairs outside 0 ... n are zeros from the start
        // and never written, for every base case has the same n.
        for m in 0..<n {
            pairs[2 &* (m &+ pairPadding)] = a[m]
            pairs[2 &* (m &+ pairPadding) &+ 3] = a[m]
        }
        for t in 0..<(n / 2) {
            let even = b[2 &* t], odd = b[2 &* t &+ 1]
            broadcast[t] = SIMD8(even, odd, even, odd, even, odd, even, odd)
        }
        let pairBytes = UnsafeRawPointer(pairs)
        for group in stride(from: 0, to: 2 * n, by: 16) {
            // Output k0 needs the pairs t from (k0 - n)/2 to k0/2 + 1; output k0 + 12 to k0/2 + 7.
            let first = max(0, (group - n) / 2), last = min(n / 2 - 1, group / 2 + 7)
            var sum0 = SIMD4<Int32>.zero, sum1 = sum0, sum2 = sum0, sum3 = sum0
            var t = first
            while t <= last {
                let multiplier = broadcast[t]
                let offset = 4 &* (group &- 2 &* t &+ pairPadding)
                sum0 &+= multiplyAddPairs(pairBytes.loadUnaligned(fromByteOffset: offset, as: SIMD8<Int16>.self), multiplier)
                sum1 &+= multiplyAddPairs(pairBytes.loadUnaligned(fromByteOffset: offset &+ 16, as: SIMD8<Int16>.self), multiplier)
                sum2 &+= multiplyAddPairs(pairBytes.loadUnaligned(fromByteOffset: offset &+ 32, as: SIMD8<Int16>.self), multiplier)
                sum3 &+= multiplyAddPairs(pairBytes.loadUnaligned(fromByteOffset: offset &+ 48, as: SIMD8<Int16>.self), multiplier)
                t &+= 1
            }
            store(sum0, out + group)
            store(sum1, out + group + 4)
            store(sum2, out + group + 8)
            store(sum3, out + group + 12)
        }
    }

    /// x[0]·y[0] + x[1]·y[1], x[2]·y[2] + x[3]·y[3], ... in 32 bits: written so that the
    /// compiler emits one `pmaddwd` (SSE2) for it.
    @inline(__always)
    private static func multiplyAddPairs(_ x: SIMD8<Int16>, _ y: SIMD8<Int16>) -> SIMD4<Int32> {
        let products = SIMD8<Int32>(truncatingIfNeeded: x) &* SIMD8<Int32>(truncatingIfNeeded: y)
        return products.evenHalf &+ products.oddHalf
    }
}

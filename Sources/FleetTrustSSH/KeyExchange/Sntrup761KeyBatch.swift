/// sntrup761 key pairs made several at a time, because the two reciprocals of a key pair, 1/g in
/// R/3 and 1/(3·f) in R/q (each 2p - 1 division steps), were most of its cost: Montgomery's
/// trick (as in Bernstein, Brumley, Chen and Tuveri's "OpenSSLNTRU") turns n reciprocals into
/// one reciprocal of the product of all n plus, per key, three products.
///
/// R/q is a field, so the f_i always have one. R/3 is not (x^p - x - 1 has factors mod 3, which
/// is why a single key pair draws g again until it is invertible), but a product is invertible
/// exactly when every factor is: when the batch's product of the g_i is not (some g_i is not,
/// which a random g almost never is), the batch is made as single key pairs from the same
/// bytes instead, each redrawing its g, so the outcome is the same either way.
///
/// The randomness is drawn in exactly the order of n single key pairs (each key's g until it
/// is invertible in R/3, then its f, then its rho), and the reciprocals are the same ring
/// elements, so a batch of n is byte for byte n single key pairs from the same stream of bytes.
/// Every loop runs the same number of times whatever the secrets are; only the batch size,
/// which is public, sets the number of products, and whether some g was drawn again shows, as
/// it does in a single key pair.
enum Sntrup761KeyBatch {
    /// One key's randomness and 1/g.
    private struct Draw {
        let g: [Int8]
        let gInverse: [Int8]
        let f: [Int8]
        let rho: [UInt8]
    }

    /// `count` key pairs (public key, secret key) in the order single calls would give them.
    static func generate(count: Int, random: Sntrup761.RandomBytes) -> [(publicKey: [UInt8], secretKey: [UInt8])] {
        let draws = withoutActuallyEscaping(random) { drawn(count, $0) }
        let fInverses = reciprocalsOfThreeTimes(draws.map(\.f))
        return zip(draws, fInverses).map { draw, fInverse in
            let publicKey = Sntrup761Encoding.encodeRq(Sntrup761Ring.multiply(fInverse, small: draw.g))
            var secretKey = Sntrup761Encoding.encodeSmall(draw.f) + Sntrup761Encoding.encodeSmall(draw.gInverse)
            secretKey += publicKey
            secretKey += draw.rho
            secretKey += Sntrup761.hash(4, publicKey)
            return (publicKey, secretKey)
        }
    }

    /// The keys' randomness, drawn first as if every g were invertible (recording the bytes);
    /// if one is not, the same bytes (then more) are drawn again as single key pairs draw them.
    private static func drawn(_ count: Int, _ random: @escaping Sntrup761.RandomBytes) -> [Draw] {
        var recorded: [UInt8] = []
        let recording: Sntrup761.RandomBytes = { length in
            let bytes = random(length)
            recorded += bytes
            return bytes
        }
        let speculative = (0..<count).map { _ in
            (g: Sntrup761.smallRandom(recording), f: Sntrup761.shortRandom(recording), rho: recording(Sntrup761.smallBytes))
        }
        let gs = speculative.map(\.g)
        if let gInverses = reciprocals(gs, first: gs.first ?? [], bySmall: Sntrup761Ring.multiply3,
                                       byFull: Sntrup761Ring.multiply3, invert: Sntrup761Ring.reciprocal3) {
            return zip(speculative, gInverses).map { Draw(g: $0.g, gInverse: $1, f: $0.f, rho: $0.rho) }
        }
        var position = 0
        let replay: Sntrup761.RandomBytes = { length in
            let start = min(position, recorded.count), end = min(position + length, recorded.count)
            position += length
            let bytes = Array(recorded[start..<end])
            return bytes.count == length ? bytes : bytes + random(length - bytes.count)
        }
        return (0..<count).map { _ in
            var g: [Int8]
            var gInverse: [Int8]?
            repeat {
                g = Sntrup761.smallRandom(replay)
                gInverse = Sntrup761Ring.reciprocal3(g)
            } while gInverse == nil
            return Draw(g: g, gInverse: gInverse ?? [], f: Sntrup761.shortRandom(replay), rho: replay(Sntrup761.smallBytes))
        }
    }

    /// 1/(3·f_i) in R/q for short (nonzero) f_i, by one reciprocal.
    static func reciprocalsOfThreeTimes(_ fs: [[Int8]]) -> [[Int16]] {
        // A product of nonzero elements of a field is nonzero, so this reciprocal exists.
        guard let reciprocals = reciprocals(fs, first: (fs.first ?? []).map(Int16.init), bySmall: Sntrup761Ring.multiply(_:small:),
                                            byFull: Sntrup761Ring.multiply(_:_:), invert: Sntrup761Ring.reciprocalOfThreeTimes) else {
            preconditionFailure("a product of short polynomials is invertible in R/q, a field")
        }
        return reciprocals
    }

    /// Montgomery's trick: with prefix products P_i = x_1···x_i and R_i = invert(P_i),
    /// invert(x_i) = R_i·P_(i-1) and R_(i-1) = R_i·x_i (`invert` may scale, as 1/(3·x) does:
    /// the scale carries through). nil when the product has no reciprocal. `first` is x_1 as an
    /// element of the ring; `bySmall` multiplies by a factor, `byFull` by an element.
    private static func reciprocals<Element, Factor>(_ factors: [Factor], first: Element,
                                                     bySmall: (Element, Factor) -> Element,
                                                     byFull: (Element, Element) -> Element,
                                                     invert: (Element) -> Element?) -> [Element]? {
        guard !factors.isEmpty else { return [] }
        var prefixes = [first]
        for factor in factors.dropFirst() { prefixes.append(bySmall(prefixes[prefixes.count - 1], factor)) }
        guard var reciprocal = invert(prefixes[prefixes.count - 1]) else { return nil }
        var reciprocals = [Element](repeating: first, count: factors.count)
        for index in stride(from: factors.count - 1, to: 0, by: -1) {
            reciprocals[index] = byFull(reciprocal, prefixes[index - 1])
            reciprocal = bySmall(reciprocal, factors[index])
        }
        reciprocals[0] = reciprocal
        return reciprocals
    }
}

import COpenSSL

/// The checks OpenSSH 9.2 makes on an ECDSA public point before it calls it a key
/// (`sshbuf_get_eckey` then `sshkey_ec_validate_public`).
///
/// A point that is not on its curve, or a degenerate one, is not a key to `ssh`: a known_hosts
/// line holding it is ignored and a server sending it fails the key exchange, so fleettrust must
/// not compare, fingerprint or record it either.
enum ECPublicPoint {
    /// Why a point is refused; `sshkey.c` reports all of them as an invalid key.
    enum Problem: Error, Equatable, Sendable {
        /// Empty, longer than `SSHBUF_MAX_ECPOINT`, or not in uncompressed form (`get_ec`).
        case badEncoding
        /// `EC_POINT_oct2point` refuses it: wrong length for the curve, or not on the curve.
        case notOnCurve
        /// `sshkey_ec_validate_public`: a coordinate too small or not below the group order minus one.
        case degenerate
    }

    /// `SSHBUF_MAX_ECPOINT`: ((528 * 2 / 8) + 1) bytes.
    static let maximumLength = 133

    /// Checks `point` (the SEC1 octets) for the NIST curve `nid`.
    ///
    /// `sshkey_ec_validate_public` also checks that n·Q is the point at infinity; the NIST curves
    /// OpenSSH supports have cofactor 1, so every point on them except infinity (which has no
    /// uncompressed encoding) passes that test, and the costly multiplication is left out: a
    /// 200,000-line known_hosts of ECDSA keys must load in well under a second.
    static func validate(_ point: [UInt8], curve: Curve) throws(Problem) {
        guard !point.isEmpty, point.count <= maximumLength, point[0] == 4 else { throw .badEncoding }
        guard let group = curve.group, let scratch = Scratch.current, let ecPoint = scratch.point(for: curve) else { throw .notOnCurve }
        guard point.withUnsafeBufferPointer({ EC_POINT_oct2point(group, ecPoint, $0.baseAddress, $0.count, scratch.context) }) == 1 else {
            throw .notOnCurve
        }
        let coordinateLength = (point.count - 1) / 2
        let x = point[1...coordinateLength], y = point[(coordinateLength + 1)...]
        let half = curve.orderBits / 2
        guard bitLength(x) > half, bitLength(y) > half,
              lessThan(x, curve.orderMinusOne), lessThan(y, curve.orderMinusOne) else { throw .degenerate }
    }

    private static func bitLength(_ bytes: ArraySlice<UInt8>) -> Int {
        guard let index = bytes.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (bytes.endIndex - index - 1) * 8 + (8 - bytes[index].leadingZeroBitCount)
    }

    /// `a < b` for big-endian magnitudes; `b` is given without leading zeros.
    private static func lessThan(_ a: ArraySlice<UInt8>, _ b: [UInt8]) -> Bool {
        let trimmed = a.drop { $0 == 0 }
        if trimmed.count != b.count { return trimmed.count < b.count }
        for (left, right) in zip(trimmed, b) where left != right { return left < right }
        return false
    }

    /// A thread's reusable OpenSSL working memory (a `BN_CTX` and one point per curve): made
    /// afresh for each key, they were most of the cost of reading a large known_hosts of ECDSA keys.
    final class Scratch {
        let context: OpaquePointer?
        private var points: [ObjectIdentifier: OpaquePointer] = [:]

        private init?() {
            guard let context = BN_CTX_new() else { return nil }
            self.context = context
        }

        deinit {
            for point in points.values { EC_POINT_free(point) }
            BN_CTX_free(context)
        }

        func point(for curve: Curve) -> OpaquePointer? {
            if let point = points[ObjectIdentifier(curve)] { return point }
            guard let group = curve.group, let point = EC_POINT_new(group) else { return nil }
            points[ObjectIdentifier(curve)] = point
            return point
        }

        private static let perThread = PerThread<Scratch> { Scratch() }

        /// This thread's scratch, made on first use and released when the thread ends.
        static var current: Scratch? { perThread.current }
    }

    /// One of the curves of `ecdsa-sha2-nistp*`, with what the checks need from OpenSSL, made once.
    /// Unchecked-sendable: the group is only read after creation (OpenSSL's functions take it `const`).
    final class Curve: @unchecked Sendable {
        let orderBits: Int
        /// The group order minus one, big-endian, without leading zeros.
        let orderMinusOne: [UInt8]
        let group: OpaquePointer?

        static let p256 = Curve(nid: NID_X9_62_prime256v1)
        static let p384 = Curve(nid: NID_secp384r1)
        static let p521 = Curve(nid: NID_secp521r1)

        private init(nid: Int32) {
            group = EC_GROUP_new_by_curve_name(nid)
            var bits = 0
            var order: [UInt8] = []
            if let group, let bn = BN_new() {
                if EC_GROUP_get_order(group, bn, nil) == 1 {
                    bits = Int(BN_num_bits(bn))
                    if BN_sub_word(bn, 1) == 1 {
                        order = [UInt8](repeating: 0, count: Int((BN_num_bits(bn) + 7) / 8))
                        _ = BN_bn2bin(bn, &order)
                    }
                }
                BN_free(bn)
            }
            orderBits = bits
            orderMinusOne = order
        }
    }
}

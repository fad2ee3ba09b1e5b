import COpenSSL
import Synchronization

/// Certificates already read, keyed by their exact DER bytes, so a certificate that many
/// endpoints present (a CA, an intermediate, a load-balanced or cloned leaf) is parsed by
/// OpenSSL once per process rather than several times per endpoint judged.
///
/// OpenSSL 3's `d2i_X509` decodes the public key through its provider decoders, which costs
/// more than the TLS handshake itself: reading the same bytes again is the largest share of a
/// TLS scan's CPU without this. The key is the whole DER, so a hit is the same certificate,
/// byte for byte, and every verdict stays what a fresh parse gives. Bounded in entries and in
/// bytes (the oldest entry goes first); only certificates that read are kept, so hostile bytes
/// cost a parse each time but never memory.
final class TLSCertificateCache: Sendable {
    static let shared = TLSCertificateCache(entries: 1024, bytes: 8 << 20)

    private struct State {
        var entries: [DERKey: TLSParsedCertificate] = [:]
        var order: [DERKey] = []
        var bytes = 0
    }

    private let state = Mutex(State())
    private let maximumEntries: Int
    private let maximumBytes: Int

    init(entries: Int, bytes: Int) {
        maximumEntries = entries
        maximumBytes = bytes
    }

    /// The certificate read from `der`, from the cache or parsed now (outside the lock, so
    /// judging threads never wait on each other's parses).
    func parsed(_ der: [UInt8]) throws(TLSCertificate.ReadError) -> TLSParsedCertificate {
        guard !der.isEmpty else { throw .empty }
        guard der.count <= TLSHandshake.maximumCertificateBytes else { throw .tooLarge(der.count) }
        let key = DERKey(bytes: der)
        if let hit = state.withLock({ $0.entries[key] }) { return hit }
        let parsed = try TLSParsedCertificate(der: der)
        state.withLock { state in
            guard state.entries[key] == nil else { return }
            state.entries[key] = parsed
            state.order.append(key)
            state.bytes += der.count
            while state.order.count > maximumEntries || state.bytes > maximumBytes, !state.order.isEmpty {
                let oldest = state.order.removeFirst()
                state.entries[oldest] = nil
                state.bytes -= oldest.bytes.count
            }
        }
        return parsed
    }

    /// An OpenSSL certificate for `der` that the caller owns (and frees with `X509_free`): the
    /// cached one with a reference added, else a plain parse of bytes the cache does not keep
    /// (larger than a kept certificate, or without a readable key) so that a chain check sees
    /// exactly the certificates OpenSSL itself would read.
    func retainedX509(_ der: [UInt8]) -> OpaquePointer? {
        if let parsed = try? parsed(der), X509_up_ref(parsed.x509) == 1 { return parsed.x509 }
        return TLSCertificate.parse(der)
    }

    /// Whole DER bytes as a dictionary key, hashed as one buffer rather than byte by byte.
    private struct DERKey: Hashable, Sendable {
        let bytes: [UInt8]
        func hash(into hasher: inout Hasher) {
            bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }
}

/// One certificate read once: the values the judge shows and OpenSSL's parsed form, which the
/// chain and name checks use. OpenSSL's `X509` is reference-counted and locks its own lazily
/// filled caches, so one may serve checks on several threads at once (as a store's do).
final class TLSParsedCertificate: @unchecked Sendable {
    let certificate: TLSCertificate
    let x509: OpaquePointer

    init(der: [UInt8]) throws(TLSCertificate.ReadError) {
        guard let x509 = TLSCertificate.parse(der) else { throw .notDER }
        guard let certificate = TLSCertificate(der: der, x509: x509) else {
            X509_free(x509)
            throw .noPublicKey
        }
        self.certificate = certificate
        self.x509 = x509
    }

    deinit { X509_free(x509) }
}

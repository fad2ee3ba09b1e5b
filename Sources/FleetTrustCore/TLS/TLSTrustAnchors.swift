import COpenSSL

/// The certificate authorities a TLS chain must lead to: the system store, or the files given
/// with `--tls-ca-file` (which replace it, as `curl --cacert` does).
///
/// Wraps one OpenSSL `X509_STORE`, built once and then only read: OpenSSL locks its stores, so
/// the judge may verify chains against it from any thread.
public final class TLSTrustAnchors: @unchecked Sendable {
    /// Where the anchors came from, for evidence (`system store`, or the files).
    public let source: String
    let store: OpaquePointer

    /// Why a CA file cannot be used.
    public struct LoadError: Error, Hashable, Sendable, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "\(Sanitizer.clean(path, limit: 300)): \(reason)" }
    }

    private init(source: String, store: OpaquePointer) {
        self.source = source
        self.store = store
    }

    deinit { X509_STORE_free(store) }

    /// The operating system's store (`/etc/ssl/certs`).
    public static func system() -> TLSTrustAnchors {
        let store = X509_STORE_new()!
        X509_STORE_set_default_paths(store)
        ERR_clear_error()
        return TLSTrustAnchors(source: "system store", store: store)
    }

    /// Only the certificates in these PEM files.
    public static func files(_ paths: [String]) throws(LoadError) -> TLSTrustAnchors {
        let store = X509_STORE_new()!
        for path in paths {
            let snapshot: FileSnapshot
            do { snapshot = try GuardedFile(path: path).read() } catch {
                X509_STORE_free(store)
                throw LoadError(path: path, reason: "\(error)")
            }
            guard snapshot.exists else {
                X509_STORE_free(store)
                throw LoadError(path: path, reason: "no such file")
            }
            let added = addPEM(snapshot.bytes, to: store)
            guard added > 0 else {
                X509_STORE_free(store)
                throw LoadError(path: path, reason: "no PEM certificate in the file")
            }
        }
        return TLSTrustAnchors(source: paths.joined(separator: ", "), store: store)
    }

    /// Adds every PEM certificate in `bytes`; returns how many.
    private static func addPEM(_ bytes: [UInt8], to store: OpaquePointer) -> Int {
        guard bytes.count <= 16 << 20 else { return 0 }
        let bio = bytes.withUnsafeBytes { BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }
        guard let bio else { return 0 }
        defer { BIO_free(bio) }
        var count = 0
        while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
            if X509_STORE_add_cert(store, certificate) == 1 { count += 1 }
            X509_free(certificate)
        }
        ERR_clear_error()
        return count
    }
}

import COpenSSL
import Synchronization

/// The certificate authorities a TLS chain must lead to: the system store, or the files given
/// with `--tls-ca-file` (which replace it, as `curl --cacert` does).
///
/// Wraps one OpenSSL `X509_STORE`, built once and then only read: OpenSSL locks its stores, so
/// the judge may verify chains against it from any thread. The system store is read on the
/// first chain check, not when a judge is made: reading its bundle costs about as much as 20
/// TLS handshakes, and most runs (every SSH-only scan) never check a chain.
public final class TLSTrustAnchors: Sendable {
    /// Where the anchors came from, for evidence (`system store`, or the files).
    public let source: String
    private let loaded: Mutex<OwnedStore?>
    private let load: @Sendable () -> OwnedStore

    /// Why a CA file cannot be used.
    public struct LoadError: Error, Hashable, Sendable, CustomStringConvertible {
        public let path: String
        public let reason: String
        public var description: String { "\(Sanitizer.clean(path, limit: 300)): \(reason)" }
    }

    private init(source: String, loaded: OwnedStore?, load: @escaping @Sendable () -> OwnedStore) {
        self.source = source
        self.loaded = Mutex(loaded)
        self.load = load
    }

    /// The store, read now if it was not yet.
    var store: OpaquePointer {
        loaded.withLock { loaded in
            if let loaded { return loaded }
            let store = load()
            loaded = store
            return store
        }.pointer
    }

    /// The operating system's store (`/etc/ssl/certs`).
    public static func system() -> TLSTrustAnchors {
        TLSTrustAnchors(source: "system store", loaded: nil) {
            let store = X509_STORE_new()!
            X509_STORE_set_default_paths(store)
            ERR_clear_error()
            return OwnedStore(store)
        }
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
        let owned = OwnedStore(store)
        return TLSTrustAnchors(source: paths.joined(separator: ", "), loaded: owned) { owned }
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

    /// One `X509_STORE`, freed with its last reference.
    private final class OwnedStore: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
        deinit { X509_STORE_free(pointer) }
    }
}

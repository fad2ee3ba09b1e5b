#if canImport(Glibc)
import Glibc
#endif

/// One object per thread, made on first use and released when the thread ends.
///
/// OpenSSL's working objects (`BN_CTX`, `EVP_PKEY_CTX`, key templates) must not be shared between
/// threads, and making them afresh for each key or handshake costs OpenSSL 3 a look-up of the
/// algorithm in its provider store every time. A worker thread keeps its own set here instead.
/// Made once per use site (a `static let`): the pthread key lives as long as the process.
/// Unchecked-sendable: only the pthread key is shared; each value is touched by its own thread.
public final class PerThread<Value: AnyObject>: @unchecked Sendable {
    private let key: pthread_key_t?
    private let make: () -> Value?

    /// `make` builds the thread's value; nil (OpenSSL out of memory) is tried again on the next use.
    public init(_ make: @escaping () -> Value?) {
        self.make = make
        var key = pthread_key_t()
        let made = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        self.key = made == 0 ? key : nil
    }

    /// This thread's value.
    public var current: Value? {
        guard let key else { return nil }
        if let existing = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(existing).takeUnretainedValue()
        }
        guard let value = make() else { return nil }
        let stored = Unmanaged<Value>.passRetained(value)
        guard pthread_setspecific(key, stored.toOpaque()) == 0 else {
            stored.release()
            return nil
        }
        return value
    }
}

import Synchronization

/// The verification keys of recently checked host keys, by their exact blob, bounded.
///
/// A fleet cloned from one image shows the same host key on many hosts; building its OpenSSL key
/// once saves most of what a verification costs beyond the arithmetic. Keyed by the whole blob
/// (for a certificate: the certificate's), so a key is only ever used for the very bytes it was
/// built from; oldest entries go first past `capacity`, and large blobs are never kept.
final class VerificationKeyCache: Sendable {
    static let shared = VerificationKeyCache(capacity: 256)

    /// Certificates with long principal lists are built each time rather than kept.
    static let largestBlob = 4096

    private struct State {
        var keys: [[UInt8]: VerificationKey] = [:]
        var order: [[UInt8]] = []
        var next = 0
    }

    private let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) { self.capacity = max(capacity, 1) }

    /// The verification key for `key`, built if not kept; nil if it cannot verify anything.
    func key(for key: HostKey) -> VerificationKey? {
        guard key.blob.count <= Self.largestBlob else { return VerificationKey(key) }
        if let kept = state.withLock({ $0.keys[key.blob] }) { return kept }
        guard let made = VerificationKey(key) else { return nil }
        state.withLock { state in
            guard state.keys[key.blob] == nil else { return }
            if state.order.count < capacity {
                state.order.append(key.blob)
            } else {
                state.keys[state.order[state.next]] = nil
                state.order[state.next] = key.blob
                state.next = (state.next + 1) % capacity
            }
            state.keys[key.blob] = made
        }
        return made
    }

    /// How many keys are kept (for tests of the bound).
    var count: Int { state.withLock { $0.keys.count } }
}

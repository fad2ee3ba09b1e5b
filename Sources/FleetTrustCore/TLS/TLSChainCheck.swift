import COpenSSL

/// Whether a recorded chain leads to a trusted CA, and whether its leaf names the endpoint:
/// OpenSSL's `X509_verify_cert` and `X509_check_host`/`X509_check_ip_asc` over DER the probe
/// recorded, so `scan`, `--replay` and the dashboard judge the same bytes the same way.
///
/// Time is left out of the chain check (`X509_V_FLAG_NO_CHECK_TIME`): validity is judged by the
/// caller against its own clock from the certificates' fields, so a replay at another clock
/// needs no network and no OpenSSL time override, and "expired" stays apart from "untrusted".
public struct TLSChainCheck: Hashable, Sendable {
    /// The chain leads to a trust anchor (ignoring validity periods).
    public var validates: Bool
    /// OpenSSL's reason when it does not (`self-signed certificate`, `unable to get local issuer certificate`).
    public var problem: CleanText?
    /// The chain as OpenSSL built it, leaf first, up to the anchor (which may come from the
    /// store rather than the server): CA pins match any certificate in it.
    public var built: [TLSCertificate]

    /// The certificate whose issuer is trusted: the anchor's subject.
    public var anchor: TLSCertificate? { validates ? built.last : nil }

    public static func check(chain: [[UInt8]], anchors: TLSTrustAnchors) -> TLSChainCheck {
        let cache = TLSCertificateCache.shared
        guard let leafDER = chain.first, let leaf = cache.retainedX509(leafDER) else {
            return TLSChainCheck(validates: false, problem: CleanText("the server sent no readable certificate"), built: [])
        }
        defer { X509_free(leaf) }
        let untrusted = fleettrust_x509_stack_new()!
        defer { fleettrust_x509_stack_free_all(untrusted) }
        for der in chain.dropFirst() {
            if let certificate = cache.retainedX509(der) { _ = fleettrust_x509_stack_push(untrusted, certificate) }
        }
        guard let context = X509_STORE_CTX_new() else {
            return TLSChainCheck(validates: false, problem: CleanText("out of memory"), built: [])
        }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, anchors.store, leaf, untrusted) == 1 else {
            ERR_clear_error()
            return TLSChainCheck(validates: false, problem: CleanText("the chain cannot be checked"), built: [])
        }
        // As libssl checks a server: the TLS-server purpose (a leaf only for client auth fails),
        // and security level 1 (an MD5 signature or an RSA key under 1024 bits fails).
        X509_STORE_CTX_set_default(context, "ssl_server")
        X509_VERIFY_PARAM_set_auth_level(X509_STORE_CTX_get0_param(context), 1)
        X509_VERIFY_PARAM_set_flags(X509_STORE_CTX_get0_param(context), UInt(X509_V_FLAG_NO_CHECK_TIME))
        let verified = X509_verify_cert(context) == 1
        let code = X509_STORE_CTX_get_error(context)
        let built = X509_STORE_CTX_get0_chain(context).map { TLSCertificate.derChain($0, limit: 16) }?
            .compactMap { try? TLSCertificate(der: $0) } ?? []
        ERR_clear_error()
        let problem = verified ? nil : CleanText(String(cString: X509_verify_cert_error_string(Int(code))), limit: 200)
        return TLSChainCheck(validates: verified, problem: problem, built: built)
    }

    /// Whether the leaf names `name`: SAN IP entries for an IP literal; else SAN DNS entries
    /// (wildcards in the left-most label), and the subject CN only when there is no DNS SAN.
    public static func leafNames(_ leafDER: [UInt8], _ name: String) -> Bool {
        guard let leaf = TLSCertificateCache.shared.retainedX509(leafDER) else { return false }
        defer { X509_free(leaf) }
        let matched: Bool
        if CIDRPattern.addressBytes(name) != nil {
            matched = X509_check_ip_asc(leaf, name, 0) == 1
        } else {
            matched = X509_check_host(leaf, name, name.utf8.count, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS), nil) == 1
        }
        ERR_clear_error()
        return matched
    }
}

#ifndef FLEETTRUST_COPENSSL_SHIM_H
#define FLEETTRUST_COPENSSL_SHIM_H
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/md5.h>
#include <openssl/rand.h>
#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/x509_vfy.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

/* libssl's and libcrypto's function-like macros, which Swift does not import. */
static inline long fleettrust_ssl_set_sni(SSL *ssl, const char *name) { return SSL_set_tlsext_host_name(ssl, name); }
static inline long fleettrust_ssl_request_ocsp(SSL *ssl) { return SSL_set_tlsext_status_type(ssl, TLSEXT_STATUSTYPE_ocsp); }
static inline long fleettrust_ssl_ocsp_response_length(SSL *ssl) {
    const unsigned char *response = NULL;
    return SSL_get_tlsext_status_ocsp_resp(ssl, &response);
}
static inline int fleettrust_ssl_ctx_min_tls12(SSL_CTX *ctx) { return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); }
static inline int fleettrust_x509_stack_count(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *fleettrust_x509_stack_at(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
static inline STACK_OF(X509) *fleettrust_x509_stack_new(void) { return sk_X509_new_null(); }
static inline int fleettrust_x509_stack_push(STACK_OF(X509) *stack, X509 *certificate) { return sk_X509_push(stack, certificate); }
static inline void fleettrust_x509_stack_free_all(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
/* RFC 2253 names, UTF-8 left unescaped (cleaned by CleanText afterwards). */
static inline unsigned long fleettrust_rfc2253_utf8_flags(void) { return XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB; }
static inline int fleettrust_general_names_count(const GENERAL_NAMES *names) { return sk_GENERAL_NAME_num(names); }
static inline const GENERAL_NAME *fleettrust_general_names_at(const GENERAL_NAMES *names, int index) { return sk_GENERAL_NAME_value(names, index); }
static inline void fleettrust_general_names_free(GENERAL_NAMES *names) { GENERAL_NAMES_free(names); }
#endif

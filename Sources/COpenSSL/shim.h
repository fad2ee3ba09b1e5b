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
#include <openssl/param_build.h>
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
/* Public keys from a kept EVP_PKEY_fromdata context (fetched once per thread, not per key): the
   OSSL_PARAM arrays point at the caller's bytes and live on the C stack for the one call only. */
static inline EVP_PKEY *fleettrust_ec_public_key(EVP_PKEY_CTX *ctx, const char *group, const unsigned char *point, size_t length) {
    OSSL_PARAM params[3] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)group, 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)point, length), OSSL_PARAM_construct_end() };
    EVP_PKEY *key = NULL;
    return EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) == 1 ? key : NULL;
}
/* n and e are big-endian magnitudes (leading zero bytes allowed). */
static inline EVP_PKEY *fleettrust_rsa_public_key(EVP_PKEY_CTX *ctx, const unsigned char *n, int n_length,
                                                  const unsigned char *e, int e_length) {
    EVP_PKEY *key = NULL;
    BIGNUM *modulus = BN_bin2bn(n, n_length, NULL), *exponent = BN_bin2bn(e, e_length, NULL);
    OSSL_PARAM_BLD *builder = OSSL_PARAM_BLD_new();
    OSSL_PARAM *params = NULL;
    if (modulus != NULL && exponent != NULL && builder != NULL
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_N, modulus)
        && OSSL_PARAM_BLD_push_BN(builder, OSSL_PKEY_PARAM_RSA_E, exponent)
        && (params = OSSL_PARAM_BLD_to_param(builder)) != NULL
        && EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params) != 1)
        key = NULL;
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(builder);
    BN_free(modulus);
    BN_free(exponent);
    return key;
}
#endif

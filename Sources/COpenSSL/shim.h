// The system OpenSSL (3.0 or later) for Tether's TLS on Linux: Debian's `libssl-dev`.
// Function-like macros that Swift cannot call are wrapped in small inline functions below.
#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H

#if !__has_include(<openssl/ssl.h>)
#error "Tether's TLS needs the OpenSSL development headers: install libssl-dev (apt-get install libssl-dev)"
#else
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/opensslv.h>
#include <openssl/pkcs12.h>

#if OPENSSL_VERSION_NUMBER < 0x30000000L
#error "Tether's TLS needs OpenSSL 3.0 or later (Debian's libssl-dev)"
#endif

static inline long tether_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

static inline long tether_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

static inline long tether_SSL_CTX_set_max_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_max_proto_version(ctx, version);
}

static inline long tether_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

static inline void tether_SSL_CTX_refuse_renegotiation(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
}

static inline long tether_SSL_CTX_add_extra_chain_cert(SSL_CTX *ctx, X509 *cert) {
    return SSL_CTX_add_extra_chain_cert(ctx, cert);
}

static inline int tether_X509_chain_count(STACK_OF(X509) *chain) {
    return chain == NULL ? 0 : sk_X509_num(chain);
}

static inline X509 *tether_X509_chain_at(STACK_OF(X509) *chain, int index) {
    return sk_X509_value(chain, index);
}

static inline void tether_X509_chain_free(STACK_OF(X509) *chain) {
    sk_X509_pop_free(chain, X509_free);
}

static inline int tether_ERR_GET_REASON(unsigned long code) {
    return ERR_GET_REASON(code);
}

static inline int tether_ERR_GET_LIB(unsigned long code) {
    return ERR_GET_LIB(code);
}

static inline EVP_PKEY *tether_EVP_EC_gen_P256(void) {
    return EVP_EC_gen("P-256");
}

static inline int tether_X509_NAME_add_common_name(X509_NAME *name, const char *commonName) {
    return X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)commonName, -1, -1, 0);
}

static inline int tether_SSL_get_ex_new_index(void) {
    return SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

static inline int tether_SSL_SESSION_get_ex_new_index(CRYPTO_EX_free *free_function) {
    return SSL_SESSION_get_ex_new_index(0, NULL, NULL, NULL, free_function);
}

static inline long tether_SSL_CTX_set_session_cache_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_session_cache_mode(ctx, mode);
}

static inline long tether_SSL_CTX_sess_set_cache_size(SSL_CTX *ctx, long size) {
    return SSL_CTX_sess_set_cache_size(ctx, size);
}

static inline void tether_SSL_CTX_disable_tickets(SSL_CTX *ctx) {
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
}

static inline int tether_X509_NAME_print_rfc2253(BIO *bio, const X509_NAME *name) {
    return X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
}

static inline void tether_OPENSSL_free(void *pointer) {
    OPENSSL_free(pointer);
}
#endif
#endif

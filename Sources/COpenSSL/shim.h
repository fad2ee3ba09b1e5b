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
#endif

/* A product's fold and reduction with AVX2: the integer product folded below degree p with
   x^p = x + 1, then every coefficient reduced to its centred representative mod q or mod 3,
   as the portable Swift does it (Sntrup761Ring.folded, freezeQ, freeze3). The representative
   is unique, so the values are the same; the quotient is estimated in single precision (exact
   enough for |x| < 2^23, off by at most one near a half) and one correction each way by masks
   makes it exact. */
#include "sntrup761_avx2.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define P 761

/* product[0 .. p) += product[p .. 2p - 1) shifted by 0 and by 1. */
AVX2 static void fold(int32_t *product) {
    int32_t *high = product + P;
    for (int k = 0; k < P - 1; k++) product[k] += high[k];
    for (int k = 0; k < P - 1; k++) product[k + 1] += high[k];
}

/* The centred representatives of x mod m for eight lanes, |x| < 2^23. */
AVX2 static inline __m256i centred(__m256i x, int32_t m) {
    const __m256i modulus = _mm256_set1_epi32(m), half = _mm256_set1_epi32((m - 1) / 2);
    __m256 estimate = _mm256_mul_ps(_mm256_cvtepi32_ps(x), _mm256_set1_ps(1.0f / (float)m));
    __m256i quotient = _mm256_cvtps_epi32(_mm256_round_ps(estimate, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    __m256i r = _mm256_sub_epi32(x, _mm256_mullo_epi32(quotient, modulus));
    r = _mm256_sub_epi32(r, _mm256_and_si256(_mm256_cmpgt_epi32(r, half), modulus));
    r = _mm256_add_epi32(r, _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), half), r), modulus));
    return r;
}

AVX2 void fleettrust_sntrup761_avx2_fold_centre_q(int16_t *out, int32_t *product) {
    fold(product);
    for (int k = 0; k < 768; k += 16) {
        __m256i low = centred(_mm256_loadu_si256((const __m256i *)(product + k)), 4591);
        __m256i high = centred(_mm256_loadu_si256((const __m256i *)(product + k + 8)), 4591);
        __m256i packed = _mm256_permute4x64_epi64(_mm256_packs_epi32(low, high), 0xD8);
        _mm256_storeu_si256((__m256i *)(out + k), packed);
    }
}

AVX2 void fleettrust_sntrup761_avx2_fold_centre_3(int8_t *out, int32_t *product) {
    fold(product);
    for (int k = 0; k < 768; k += 32) {
        __m256i a = centred(_mm256_loadu_si256((const __m256i *)(product + k)), 3);
        __m256i b = centred(_mm256_loadu_si256((const __m256i *)(product + k + 8)), 3);
        __m256i c = centred(_mm256_loadu_si256((const __m256i *)(product + k + 16)), 3);
        __m256i d = centred(_mm256_loadu_si256((const __m256i *)(product + k + 24)), 3);
        __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xD8);
        __m256i more = _mm256_permute4x64_epi64(_mm256_packs_epi32(c, d), 0xD8);
        __m256i bytes = _mm256_permute4x64_epi64(_mm256_packs_epi16(words, more), 0xD8);
        _mm256_storeu_si256((__m256i *)(out + k), bytes);
    }
}

#endif

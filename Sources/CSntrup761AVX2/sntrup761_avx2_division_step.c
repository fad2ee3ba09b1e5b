/* The R/q reciprocal's per-step loops with AVX2: the portable Swift's Shoup products
   (Sntrup761QReciprocal.combine, select) over sixteen 16-bit lanes instead of eight, with the
   same wrapping 16-bit operations, so the same values. */
#include "sntrup761_avx2.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))

/* a·x mod q as x·a - q·⌊x·a' / 2^16⌋ in wrapping 16-bit lanes. */
AVX2 static inline __m256i product(__m256i x, __m256i a, __m256i a_shoup, __m256i q) {
    __m256i estimate = _mm256_mulhi_epi16(x, a_shoup);
    return _mm256_sub_epi16(_mm256_mullo_epi16(x, a), _mm256_mullo_epi16(estimate, q));
}

AVX2 void fleettrust_sntrup761_avx2_eliminate(int16_t *out, const int16_t *x, int16_t a, int16_t a_shoup,
                                              const int16_t *y, int16_t b, int16_t b_shoup, long count) {
    const __m256i q = _mm256_set1_epi16(4591);
    const __m256i va = _mm256_set1_epi16(a), va_shoup = _mm256_set1_epi16(a_shoup);
    const __m256i vb = _mm256_set1_epi16(b), vb_shoup = _mm256_set1_epi16(b_shoup);
    for (long i = 0; i < count; i += 16) {
        __m256i xs = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i ys = _mm256_loadu_si256((const __m256i *)(y + i));
        __m256i result = _mm256_sub_epi16(product(xs, va, va_shoup, q), product(ys, vb, vb_shoup, q));
        _mm256_storeu_si256((__m256i *)(out + i), result);
    }
}

AVX2 void fleettrust_sntrup761_avx2_select(int16_t *a, const int16_t *b, long count, int16_t mask) {
    const __m256i masks = _mm256_set1_epi16(mask);
    for (long i = 0; i < count; i += 16) {
        __m256i mine = _mm256_loadu_si256((const __m256i *)(a + i));
        __m256i theirs = _mm256_loadu_si256((const __m256i *)(b + i));
        __m256i chosen = _mm256_xor_si256(mine, _mm256_and_si256(masks, _mm256_xor_si256(mine, theirs)));
        _mm256_storeu_si256((__m256i *)(a + i), chosen);
    }
}

#endif

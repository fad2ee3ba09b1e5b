/* Exact integer products for sntrup761 with AVX2: the portable Swift's shape (three levels of
   Karatsuba over 768 coefficients, a base case of 96 by pairwise multiply-adds), with each
   multiply-add over sixteen 16-bit lanes (vpmaddwd) instead of eight. Why the result is exact
   is said in Sntrup761Karatsuba.swift: the same bounds hold here, for the same sums are made. */
#include "sntrup761_avx2.h"

#if defined(__x86_64__)
#include <immintrin.h>
#include <string.h>

#define AVX2 __attribute__((target("avx2")))
#define SIZE 768
#define BASE 96
/* Zero pairs on either side of a base case's first operand: 32 outputs read up to 30 pairs
   before their first and 31 after their last. */
#define PADDING 32

struct scratch {
    int16_t *halves;
    int32_t *middles;
    int16_t *pairs;
    __m256i *broadcast;
};

/* out[0 .. 2·BASE) = a·b. Pair m (a[m], a[m - 1]) sits at 2·(m + PADDING); b's pairs
   (b[2t], b[2t + 1]) are broadcast to all eight 32-bit lanes, so one vpmaddwd adds
   a[k - 2t]·b[2t] + a[k - 2t - 1]·b[2t + 1] for eight outputs k. 32 outputs at a time, over the
   pairs t that reach any of them, a range set by the outputs' position alone. */
AVX2 static void schoolbook(int32_t *out, const int16_t *a, const int16_t *b, const struct scratch *s) {
    int16_t *pairs = s->pairs;
    for (int m = 0; m < BASE; m++) {
        pairs[2 * (m + PADDING)] = a[m];
        pairs[2 * (m + PADDING) + 3] = a[m];
    }
    for (int t = 0; t < BASE / 2; t++) {
        uint32_t pair = (uint32_t)(uint16_t)b[2 * t] | (uint32_t)(uint16_t)b[2 * t + 1] << 16;
        s->broadcast[t] = _mm256_set1_epi32((int32_t)pair);
    }
    for (int group = 0; group < 2 * BASE; group += 32) {
        int first = group > BASE ? (group - BASE) / 2 : 0;
        int last = group / 2 + 15 < BASE / 2 - 1 ? group / 2 + 15 : BASE / 2 - 1;
        __m256i sum0 = _mm256_setzero_si256(), sum1 = sum0, sum2 = sum0, sum3 = sum0;
        for (int t = first; t <= last; t++) {
            __m256i multiplier = s->broadcast[t];
            const int16_t *x = pairs + 2 * (group - 2 * t + PADDING);
            sum0 = _mm256_add_epi32(sum0, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)x), multiplier));
            sum1 = _mm256_add_epi32(sum1, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(x + 16)), multiplier));
            sum2 = _mm256_add_epi32(sum2, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(x + 32)), multiplier));
            sum3 = _mm256_add_epi32(sum3, _mm256_madd_epi16(_mm256_loadu_si256((const __m256i *)(x + 48)), multiplier));
        }
        _mm256_storeu_si256((__m256i *)(out + group), sum0);
        _mm256_storeu_si256((__m256i *)(out + group + 8), sum1);
        _mm256_storeu_si256((__m256i *)(out + group + 16), sum2);
        _mm256_storeu_si256((__m256i *)(out + group + 24), sum3);
    }
}

/* Adds middle - low - high (n coefficients each) into the product at n/2; entry i of both
   overlapping quarters is worked out before either is written. */
AVX2 static void interpolate(int32_t *product, const int32_t *middle, int n) {
    int half = n / 2;
    for (int i = 0; i < half; i += 8) {
        __m256i low0 = _mm256_loadu_si256((const __m256i *)(product + i));
        __m256i low1 = _mm256_loadu_si256((const __m256i *)(product + half + i));
        __m256i high0 = _mm256_loadu_si256((const __m256i *)(product + n + i));
        __m256i high1 = _mm256_loadu_si256((const __m256i *)(product + n + half + i));
        __m256i middle0 = _mm256_loadu_si256((const __m256i *)(middle + i));
        __m256i middle1 = _mm256_loadu_si256((const __m256i *)(middle + half + i));
        __m256i inner = _mm256_sub_epi32(_mm256_sub_epi32(_mm256_add_epi32(low1, middle0), low0), high0);
        __m256i outer = _mm256_sub_epi32(_mm256_sub_epi32(_mm256_add_epi32(high0, middle1), low1), high1);
        _mm256_storeu_si256((__m256i *)(product + half + i), inner);
        _mm256_storeu_si256((__m256i *)(product + n + i), outer);
    }
}

AVX2 static void add_halves(int16_t *sum, const int16_t *low, const int16_t *high, int count) {
    for (int i = 0; i < count; i += 16) {
        __m256i total = _mm256_add_epi16(_mm256_loadu_si256((const __m256i *)(low + i)),
                                         _mm256_loadu_si256((const __m256i *)(high + i)));
        _mm256_storeu_si256((__m256i *)(sum + i), total);
    }
}

/* out[0 .. 2n) = a·b: low halves, high halves, and the product of the sums less both. */
AVX2 static void multiply(int32_t *out, const int16_t *a, const int16_t *b, int n, struct scratch s) {
    if (n <= BASE) {
        schoolbook(out, a, b, &s);
        return;
    }
    int half = n / 2;
    multiply(out, a, b, half, s);
    multiply(out + n, a + half, b + half, half, s);
    int16_t *sum_a = s.halves, *sum_b = s.halves + half;
    int32_t *middle = s.middles;
    add_halves(sum_a, a, a + half, half);
    add_halves(sum_b, b, b + half, half);
    struct scratch inner = s;
    inner.halves += n;
    inner.middles += n;
    multiply(middle, sum_a, sum_b, half, inner);
    interpolate(out, middle, n);
}

AVX2 void fleettrust_sntrup761_avx2_product(int32_t *out, const int16_t *a, const int16_t *b) {
    int16_t halves[2 * SIZE];
    int32_t middles[2 * SIZE];
    int16_t pairs[2 * (BASE + 2 * PADDING)];
    __m256i broadcast[BASE / 2];
    memset(pairs, 0, sizeof pairs);
    struct scratch s = { halves, middles, pairs, broadcast };
    multiply(out, a, b, SIZE, s);
}

#endif

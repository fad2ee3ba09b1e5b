/* The sorting network behind a short sntrup761 polynomial with AVX2: the same bitonic network
   over 1024 words as the portable Swift (ConstantTimeSort), each compare-exchange a vpminud and
   a vpmaxud on eight lanes; the stages of distance 4, 2 and 1 pair the lanes of one vector by
   shuffles and keep the minimum or the maximum lane by lane. Which lanes keep which, and the
   direction of every exchange, depend on positions only, never on the words. */
#include "sntrup761_avx2.h"

#if defined(__x86_64__)
#include <immintrin.h>

#define AVX2 __attribute__((target("avx2")))
#define SIZE 1024

/* Lanes where a merge of `block` sorts downwards, for the eight words from `group` on. */
AVX2 static inline __m256i descending(int group, int block) {
    __m256i index = _mm256_add_epi32(_mm256_set1_epi32(group), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256i bit = _mm256_set1_epi32(block);
    return _mm256_cmpeq_epi32(_mm256_and_si256(index, bit), bit);
}

/* One stage of distance 4, 2 or 1 on a vector: partner is the vector with each lane's partner
   in its place, upper marks the lanes that are the later of their pair. The later lane keeps
   the maximum in an ascending run, the minimum in a descending one. */
AVX2 static inline __m256i exchange_within(__m256i words, __m256i partner, __m256i upper, __m256i down) {
    __m256i low = _mm256_min_epu32(words, partner), high = _mm256_max_epu32(words, partner);
    return _mm256_blendv_epi8(low, high, _mm256_xor_si256(upper, down));
}

AVX2 static void sort_groups_of_eight(uint32_t *x, int block, int distance) {
    const __m256i upper4 = _mm256_setr_epi32(0, 0, 0, 0, -1, -1, -1, -1);
    const __m256i upper2 = _mm256_setr_epi32(0, 0, -1, -1, 0, 0, -1, -1);
    const __m256i upper1 = _mm256_setr_epi32(0, -1, 0, -1, 0, -1, 0, -1);
    for (int group = 0; group < SIZE; group += 8) {
        __m256i down = descending(group, block);
        __m256i words = _mm256_loadu_si256((const __m256i *)(x + group));
        if (distance >= 4)
            words = exchange_within(words, _mm256_permute2x128_si256(words, words, 0x01), upper4, down);
        if (distance >= 2)
            words = exchange_within(words, _mm256_shuffle_epi32(words, _MM_SHUFFLE(1, 0, 3, 2)), upper2, down);
        words = exchange_within(words, _mm256_shuffle_epi32(words, _MM_SHUFFLE(2, 3, 0, 1)), upper1, down);
        _mm256_storeu_si256((__m256i *)(x + group), words);
    }
}

AVX2 void fleettrust_sntrup761_avx2_sort(uint32_t *x) {
    for (int block = 2; block <= SIZE; block *= 2) {
        int distance = block / 2;
        for (; distance >= 8; distance /= 2) {
            for (int start = 0; start < SIZE; start += 2 * distance) {
                uint32_t *first = x + start, *second = x + start + distance;
                int ascending = (start & block) == 0;
                for (int k = 0; k < distance; k += 8) {
                    __m256i a = _mm256_loadu_si256((const __m256i *)(first + k));
                    __m256i b = _mm256_loadu_si256((const __m256i *)(second + k));
                    __m256i low = _mm256_min_epu32(a, b), high = _mm256_max_epu32(a, b);
                    _mm256_storeu_si256((__m256i *)(first + k), ascending ? low : high);
                    _mm256_storeu_si256((__m256i *)(second + k), ascending ? high : low);
                }
            }
        }
        sort_groups_of_eight(x, block, distance);
    }
}

#endif

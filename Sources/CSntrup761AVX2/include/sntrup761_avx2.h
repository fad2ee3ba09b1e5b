#ifndef FLEETTRUST_SNTRUP761_AVX2_H
#define FLEETTRUST_SNTRUP761_AVX2_H

#include <stdint.h>

#if defined(__x86_64__)

/* sntrup761's hot loops for CPUs with AVX2, the same arithmetic as the portable Swift
   (Sntrup761Karatsuba, Sntrup761Ring, Sntrup761QReciprocal, ConstantTimeSort) over sixteen 16-bit lanes instead of eight.
   Call only when fleettrust_cpu_has_avx2() (CLinux) says the CPU and the OS support AVX2.
   Nothing here branches or indexes on the values: loop bounds are public sizes only. */

/* out[0 .. 1535] = a·b over the integers, a and b 768 coefficients each (zeros past p), every
   one within 4095 of zero, and every coefficient of the product within 2^31. */
void fleettrust_sntrup761_avx2_product(int32_t *out, const int16_t *a, const int16_t *b);

/* out[i] = a·x[i] - b·y[i] mod q (q = 4591), loosely reduced by Shoup's method with the
   multipliers' a·2^16/q estimates, for i below count rounded up to 16: x and y must hold zeros
   from count to there, and out room for them (it receives zeros there). out apart from x, y. */
void fleettrust_sntrup761_avx2_eliminate(int16_t *out, const int16_t *x, int16_t a, int16_t a_shoup,
                                         const int16_t *y, int16_t b, int16_t b_shoup, long count);

/* a[i] takes b[i] where mask is all ones, keeps its own where it is zero, for i below count
   rounded up to 16 (a and b hold zeros from count to there). */
void fleettrust_sntrup761_avx2_select(int16_t *a, const int16_t *b, long count, int16_t mask);

/* out[0 .. 767] = the centred representatives mod q (out) or mod 3 (the second) of the
   integer product (1536 coefficients, each |x| < 2^21) folded below degree p = 761 with
   x^p = x + 1, in place; entries from p on are the unfolded high part's, reduced, and mean
   nothing. */
void fleettrust_sntrup761_avx2_fold_centre_q(int16_t *out, int32_t *product);
void fleettrust_sntrup761_avx2_fold_centre_3(int8_t *out, int32_t *product);

/* x[0 .. 1023] sorted ascending, by the same bitonic network as the portable code. */
void fleettrust_sntrup761_avx2_sort(uint32_t *x);

#endif /* __x86_64__ */

#endif

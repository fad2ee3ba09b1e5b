/* Linux interfaces Glibc's Swift module leaves out: the event loop of the key-exchange engine. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <string.h>
#include <sys/prctl.h>

/* Names the calling thread (the kernel keeps 15 bytes): prctl is variadic, which Swift cannot call. */
static inline int fleettrust_name_current_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/* Whether this CPU runs AVX2 and the OS saves its ymm registers (libgcc's check of cpuid and
   xgetbv): sntrup761 picks its kernels by it once per process. */
static inline int fleettrust_cpu_has_avx2(void) {
#if defined(__x86_64__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

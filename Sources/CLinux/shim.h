/* Linux interfaces Glibc's Swift module leaves out: the event loop of the key-exchange engine. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <string.h>
#include <sys/prctl.h>

/* Names the calling thread (the kernel keeps 15 bytes): prctl is variadic, which Swift cannot call. */
static inline int fleettrust_name_current_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/* Linux interfaces Glibc's Swift module leaves out: the event loop of the key-exchange engine, and
   the resolver calls that resolv.h names through macros Swift does not import. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <string.h>
#include <netdb.h>
#include <resolv.h>

/* One SSHFP query as OpenSSH's getrrsetbyname makes it: a private resolver state read from
   /etc/resolv.conf (so `options trust-ad` decides whether the AD bit survives), the DNSSEC OK bit
   set, class IN, type SSHFP (44). Returns the length of the answer written to `answer` (at most
   `size`), or -1 with the resolver's h_errno in `*error`. */
static inline int fleettrust_sshfp_query(const char *name, unsigned char *answer, int size, int *error) {
    struct __res_state state;
    memset(&state, 0, sizeof state);
    if (res_ninit(&state) != 0) {
        *error = NETDB_INTERNAL;
        return -1;
    }
    state.options |= RES_USE_DNSSEC;
    int length = res_nquery(&state, name, 1, 44, answer, size);
    *error = state.res_h_errno;
    res_nclose(&state);
    return length;
}

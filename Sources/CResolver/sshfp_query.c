#include <netdb.h>
#include <resolv.h>
#include <string.h>

#include "sshfp_query.h"

int fleettrust_sshfp_query(const char *name, unsigned char *answer, int size, int *error) {
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

#ifndef FLEETTRUST_SSHFP_QUERY_H
#define FLEETTRUST_SSHFP_QUERY_H

/* One SSHFP query as OpenSSH's getrrsetbyname makes it: a private resolver state read from
   /etc/resolv.conf (so `options trust-ad` decides whether the AD bit survives), the DNSSEC OK bit
   set, class IN, type SSHFP (44). Returns the length of the answer written to `answer` (at most
   `size`), or -1 with the resolver's h_errno in `*error`.

   The header names no system type on purpose: the resolver's headers (netdb.h, resolv.h) pull in
   the socket headers, and a Swift module that re-declared those would hide Glibc's socket
   constants from the files compiled beside it. */
int fleettrust_sshfp_query(const char *name, unsigned char *answer, int size, int *error);

#endif

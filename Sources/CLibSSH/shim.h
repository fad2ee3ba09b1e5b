#ifndef FLEETTRUST_CLIBSSH_SHIM_H
#define FLEETTRUST_CLIBSSH_SHIM_H
#include <libssh/libssh.h>
#endif

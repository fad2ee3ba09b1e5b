#include "build_version.h"

#if __has_include("version.generated.h")
#include "version.generated.h"
#endif
#ifndef FLEETTRUST_VERSION
#define FLEETTRUST_VERSION "0.1.0"
#endif

const char *fleettrust_build_version(void) { return FLEETTRUST_VERSION; }

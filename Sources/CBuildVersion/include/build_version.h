#ifndef FLEETTRUST_BUILD_VERSION_H
#define FLEETTRUST_BUILD_VERSION_H
/* The fleettrust version this binary was built as: `git describe` when built through the Makefile
   (scripts/build-version writes version.generated.h), otherwise the fallback in build_version.c. */
const char *fleettrust_build_version(void);
#endif

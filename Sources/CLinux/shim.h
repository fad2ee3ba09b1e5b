/* Linux interfaces Glibc's Swift module leaves out: the event loop of the key-exchange engine. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <string.h>

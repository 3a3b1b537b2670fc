// Linux's epoll and eventfd, which Swift's Glibc module leaves out. glibc itself provides them,
// so there is nothing to link.
#include <sys/epoll.h>
#include <sys/eventfd.h>

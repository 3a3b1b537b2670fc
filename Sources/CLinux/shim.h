#ifndef LIVEMUX_CLINUX_SHIM_H
#define LIVEMUX_CLINUX_SHIM_H

/* Linux interfaces Swift's Glibc module leaves out, for the POSIX module only: epoll and eventfd
 * (EventPoll), and a TCP socket's peer, send queue and buffer (TCPSocket). glibc and the kernel's
 * headers provide them, so there is nothing to link. */
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/sockios.h>
#include <stdint.h>
#include <string.h>

/* A network output's TCP socket (TCPSocket: libavformat keeps its URLContext and socket private).
 * Kernel interfaces only: the socket's peer, what it still holds, its buffer. */

/* The peer port of a connected TCP socket (IPv4 or IPv6), or -1 for anything else. */
static inline int lm_tcp_peer_port(int fd) {
    int type = 0, protocol = 0;
    socklen_t len = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM) return -1;
    len = sizeof protocol;
    if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) != 0 || protocol != IPPROTO_TCP) return -1;
    struct sockaddr_storage peer;
    len = sizeof peer;
    if (getpeername(fd, (struct sockaddr *)&peer, &len) != 0) return -1;
    if (peer.ss_family == AF_INET) return ntohs(((struct sockaddr_in *)&peer)->sin_port);
    if (peer.ss_family == AF_INET6) return ntohs(((struct sockaddr_in6 *)&peer)->sin6_port);
    return -1;
}

/* Bytes the kernel still holds for the peer (SIOCOUTQ: sent but not acknowledged, plus not yet
 * sent) and bytes the peer has acknowledged since the connection began (TCP_INFO). 0 or -1. */
static inline int lm_tcp_send_queue(int fd, int64_t *unacknowledged, uint64_t *acknowledged) {
    int outq = 0;
    if (ioctl(fd, SIOCOUTQ, &outq) != 0) return -1;
    /* glibc's struct tcp_info stops before tcpi_bytes_acked, and <linux/tcp.h> clashes with it in
     * Swift's modules: read the kernel's struct (only ever extended at its end) at its offset. */
    enum { bytes_acked_offset = 120 };
    unsigned char info[256];
    socklen_t len = sizeof info;
    memset(info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &len) != 0 || len < bytes_acked_offset + 8) return -1;
    uint64_t acked;
    memcpy(&acked, info + bytes_acked_offset, sizeof acked);
    *unacknowledged = outq;
    *acknowledged = acked;
    return 0;
}

/* Bounds the kernel's send buffer (which also stops its autotuning); the size it took (Linux
 * doubles what is asked, for its bookkeeping), or -1. */
static inline int lm_set_send_buffer(int fd, int bytes) {
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) != 0) return -1;
    int taken = 0;
    socklen_t len = sizeof taken;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &taken, &len) != 0) return -1;
    return taken;
}

#endif

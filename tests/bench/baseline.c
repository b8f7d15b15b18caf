/*
 * bench-baseline: the bare reference server for scripts/bench.
 *
 * Single-threaded epoll loop on 127.0.0.1:PORT that accepts every pending
 * connection, writes "up\n" and closes it, without reading anything.  It is
 * the yardstick lbagent is measured against, so it does as little as a
 * correct server can.  SIGTERM or SIGINT end it with status 0.
 *
 * With "hold" after the port (scripts/bench --full), a connection from any
 * address but 127.0.0.1 (where the checkers come from) is answered the same
 * and then kept open until its peer closes it, as lbagent keeps the
 * connections of an address that sends agent-send text: the idle
 * connections of bench-idle stay open here too.
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

/* The kernel caps this at net.core.somaxconn; ask for plenty. */
#define BACKLOG 4096
/* Events taken per epoll_wait: thousands of held connections may close at once. */
#define MAX_EVENTS 256

/* Hold mode: keep the connections of other addresses than 127.0.0.1. */
static bool hold;
static int epfd = -1;

/* Print what failed with errno and exit, so callers only check. */
static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* The port comes from argv; reject anything that is not 1..65535. */
static unsigned short parse_port(const char *s)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 1 || v > 65535) {
        fprintf(stderr, "bench-baseline: bad port '%s'\n", s);
        exit(2);
    }
    return (unsigned short)v;
}

/* A non-blocking listening socket on loopback, as the daemon has. */
static int open_listener(unsigned short port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket");
    int one = 1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
        die("setsockopt SO_REUSEADDR");
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0)
        die("bind");
    if (listen(fd, BACKLOG) != 0)
        die("listen");
    return fd;
}

/* SIGTERM/SIGINT arrive through a signalfd, so no handler state is needed. */
static int open_signalfd(void)
{
    sigset_t set;
    if (sigemptyset(&set) != 0 || sigaddset(&set, SIGTERM) != 0 ||
        sigaddset(&set, SIGINT) != 0)
        die("sigset");
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
        die("sigprocmask");
    int fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0)
        die("signalfd");
    return fd;
}

/* Out of descriptors: back off 1 ms so the clients' closes can free some. */
static void pause_briefly(void)
{
    struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* Reply to one accepted connection; a peer that already left is no error. */
static void reply_and_close(int fd)
{
    static const char reply[] = "up\n";
    if (send(fd, reply, sizeof reply - 1, MSG_NOSIGNAL) < 0 &&
        errno != EPIPE && errno != ECONNRESET)
        perror("send");
    if (close(fd) != 0)
        perror("close");
}

static void watch(int ep, int fd);

/* Hold mode: answer as usual, then keep the connection until the peer closes. */
static void reply_and_hold(int fd)
{
    static const char reply[] = "up\n";
    if (send(fd, reply, sizeof reply - 1, MSG_NOSIGNAL) < 0 &&
        errno != EPIPE && errno != ECONNRESET && errno != EAGAIN) {
        perror("send");
        if (close(fd) != 0)
            perror("close");
        return;
    }
    watch(epfd, fd);
}

/* A held connection is readable: read what it sent; close it on EOF or error. */
static void held_event(int fd)
{
    char buf[512];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (close(fd) != 0)   /* also takes it out of the epoll set */
            perror("close");
        return;
    }
}

/* Whether a peer is one of the checkers (127.0.0.1), answered and closed at once. */
static bool is_checker(const struct sockaddr_in *sa)
{
    return sa->sin_family == AF_INET && sa->sin_addr.s_addr == htonl(INADDR_LOOPBACK);
}

/* Drain the accept queue; the listener is level-triggered, so stopping early is safe. */
static void accept_all(int lfd)
{
    for (;;) {
        struct sockaddr_in sa;
        socklen_t salen = sizeof sa;
        int fd = accept4(lfd, hold ? (struct sockaddr *)&sa : NULL, hold ? &salen : NULL,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0) {
            if (hold && !is_checker(&sa))
                reply_and_hold(fd);
            else
                reply_and_close(fd);
            continue;
        }
        switch (errno) {
        case EAGAIN:
#if EWOULDBLOCK != EAGAIN
        case EWOULDBLOCK:
#endif
            return;
        case EINTR:
        case ECONNABORTED:
        case EPROTO:
            continue;
        case EMFILE:
        case ENFILE:
        case ENOBUFS:
        case ENOMEM:
            pause_briefly();
            return;
        default:
            die("accept4");
        }
    }
}

/* Add fd to the epoll set for input readiness, level-triggered. */
static void watch(int ep, int fd)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.fd = fd;
    if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        die("epoll_ctl");
}

/* Hold mode keeps thousands of connections: take every descriptor the hard limit allows. */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        die("getrlimit");
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        die("setrlimit");
}

/* Entry point: serve until a termination signal arrives. */
int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[2], "hold") == 0)
        hold = true;
    else if (argc != 2) {
        fprintf(stderr, "usage: %s PORT [hold]\n", argv[0]);
        return 2;
    }
    unsigned short port = parse_port(argv[1]);
    if (hold)
        raise_nofile();
    int sfd = open_signalfd();
    int lfd = open_listener(port);
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0)
        die("epoll_create1");
    watch(epfd, lfd);
    watch(epfd, sfd);

    for (;;) {
        struct epoll_event evs[MAX_EVENTS];
        int n = epoll_wait(epfd, evs, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++) {
            if (evs[i].data.fd == sfd)
                return 0;
            if (evs[i].data.fd == lfd)
                accept_all(lfd);
            else
                held_event(evs[i].data.fd);
        }
    }
}

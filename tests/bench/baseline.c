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
 *
 * With "wait" it holds them the same, but answers each one WAIT_MS after
 * its accept instead of at once, as lbagent answers a connection from an
 * address that sends agent-send text when the text has not come within its
 * wait: the floor of a server that waits, to tell what the wait costs from
 * what lbagent adds to it. The waits end from a queue in the order they
 * began, with one timerfd set for the first.
 */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

/* The kernel caps this at net.core.somaxconn; ask for plenty. */
#define BACKLOG 4096
/* Events taken per epoll_wait: thousands of held connections may close at once. */
#define MAX_EVENTS 256
/* Wait mode: as lbagent's wait for agent-send text (LISTENER_REQUEST_WAIT_MS). */
#define WAIT_MS 250
/* Waits under way at most: bench-idle's 10,000 begin at about 5,300 a second. */
#define WAIT_QUEUE 65536
/* Descriptors whose generation is tracked, so a wait never answers a reused one. */
#define MAX_FD 65536

/* Hold mode: keep the connections of other addresses than 127.0.0.1. */
static bool hold;
/* Wait mode (hold too): answer those WAIT_MS after their accept. */
static bool wait_mode;
static int epfd = -1;
static int tfd = -1;

/* The waits under way, oldest first: a ring. */
static struct {
    int fd;
    unsigned gen;       /* gens[fd] when it began: stale once fd closed */
    uint64_t due_ns;
} waits[WAIT_QUEUE];
static size_t wait_head, wait_count;
static unsigned gens[MAX_FD];

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

/* Monotonic nanoseconds, the clock of the waits. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        die("clock_gettime");
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Set the timerfd for the first wait's end, or disarm it when none is left. */
static void arm_first_wait(void)
{
    struct itimerspec its;
    memset(&its, 0, sizeof its);
    if (wait_count > 0) {
        uint64_t due = waits[wait_head].due_ns;
        its.it_value.tv_sec = (time_t)(due / 1000000000u);
        its.it_value.tv_nsec = (long)(due % 1000000000u);
    }
    if (timerfd_settime(tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
        die("timerfd_settime");
}

/* Close a held connection; a wait still queued for it is then stale. */
static void close_held(int fd)
{
    if (fd < MAX_FD)
        gens[fd]++;
    if (close(fd) != 0)   /* also takes it out of the epoll set */
        perror("close");
}

static void reply_and_hold(int fd);

/* Wait mode: hold the connection now, answer it WAIT_MS later. */
static void hold_and_wait(int fd)
{
    if (wait_count == WAIT_QUEUE || fd >= MAX_FD) {
        reply_and_hold(fd);   /* more than the bench makes: answer now */
        return;
    }
    watch(epfd, fd);
    size_t i = (wait_head + wait_count++) % WAIT_QUEUE;
    waits[i].fd = fd;
    waits[i].gen = gens[fd];
    waits[i].due_ns = now_ns() + (uint64_t)WAIT_MS * 1000000u;
    if (wait_count == 1)
        arm_first_wait();
}

/* The timerfd fired: answer every wait that has ended, keep holding them. */
static void end_waits(void)
{
    uint64_t expirations, now = now_ns();
    if (read(tfd, &expirations, sizeof expirations) < 0 && errno != EAGAIN)
        die("read timerfd");
    while (wait_count > 0 && waits[wait_head].due_ns <= now) {
        int fd = waits[wait_head].fd;
        bool live = waits[wait_head].gen == gens[fd];
        wait_head = (wait_head + 1) % WAIT_QUEUE;
        wait_count--;
        static const char reply[] = "up\n";
        if (live && send(fd, reply, sizeof reply - 1, MSG_NOSIGNAL) < 0 &&
            errno != EPIPE && errno != ECONNRESET && errno != EAGAIN)
            perror("send");
    }
    arm_first_wait();
}

/* Hold mode: answer as usual, then keep the connection until the peer closes. */
static void reply_and_hold(int fd)
{
    static const char reply[] = "up\n";
    if (send(fd, reply, sizeof reply - 1, MSG_NOSIGNAL) < 0 &&
        errno != EPIPE && errno != ECONNRESET && errno != EAGAIN) {
        perror("send");
        close_held(fd);
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
        close_held(fd);
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
            if (wait_mode && !is_checker(&sa))
                hold_and_wait(fd);
            else if (hold && !is_checker(&sa))
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
    else if (argc == 3 && strcmp(argv[2], "wait") == 0)
        hold = wait_mode = true;
    else if (argc != 2) {
        fprintf(stderr, "usage: %s PORT [hold|wait]\n", argv[0]);
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
    if (wait_mode) {
        tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
        if (tfd < 0)
            die("timerfd_create");
        watch(epfd, tfd);
    }

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
            else if (evs[i].data.fd == tfd)
                end_waits();
            else
                held_event(evs[i].data.fd);
        }
    }
}

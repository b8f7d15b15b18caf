/*
 * bench-idle: idle agent connections for scripts/bench --full.
 *
 * Keeps COUNT connections open to HOST:PORT that never send anything, from
 * the given loopback source addresses in turn (one address may hold only
 * an eighth of lbagent's max_connections). lbagent closes every agent
 * connection after its 2 s deadline, so an idle connection cannot simply
 * be left open: each one is closed (with an RST, so no TIME_WAIT piles up)
 * when it is HOLD_MS old and replaced at once by a new one. The first ones
 * open spread evenly over HOLD_MS, so the replacements come at a steady
 * COUNT / HOLD_MS a second, never in bursts. With HOLD_MS just under the
 * server's deadline the server holds COUNT at any moment and sees every
 * one closed by its peer, lbagent and the reference server alike.
 *
 * -s TEXT first sends one check with that text from each source address
 * (and reads its reply): lbagent then knows those addresses send agent-send
 * text, and holds their silent connections (waiting for the text, then
 * reading until the peer closes) instead of answering and closing them at
 * once.
 *
 * It prints "ready held=N" once all COUNT are open, and at the end (after
 * -d seconds at most, or on SIGTERM or SIGINT)
 *
 *   opened=N failed=F answered=A
 *
 * failed counts connections that could not be opened or were refused,
 * answered those that had received a reply when they were closed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_MS 1000000ULL
#define NS_PER_S 1000000000ULL
#define MAX_SOURCES 64
#define MAX_COUNT 60000
#define TEACH_TIMEOUT_S 3

struct slot {
    int fd;           /* -1 while not open */
    uint64_t due_ns;  /* when it is closed and replaced */
};

static volatile sig_atomic_t stop;

/* Print what failed with errno and exit: setup failures end the run. */
static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Monotonic nanoseconds. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        die("clock_gettime");
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s -a IPV4:PORT -n COUNT -b SRC[,SRC...] [-l HOLD_MS] [-d SECONDS] [-s TEXT]\n"
            "  -n  idle connections to keep open (at most %d)\n"
            "  -b  loopback source addresses, taken in turn\n"
            "  -l  each connection's life in ms before it is replaced (default 1900)\n"
            "  -d  stop after this many seconds at most (default 600)\n"
            "  -s  first send one check with this text from each source; \\n means newline\n",
            prog, MAX_COUNT);
    exit(2);
}

/* "127.0.0.1:9505" into sa; false if it is not that form. */
static bool parse_addr(const char *s, struct sockaddr_in *sa)
{
    char host[64];
    const char *colon = strrchr(s, ':');
    if (colon == NULL || (size_t)(colon - s) >= sizeof host)
        return false;
    memcpy(host, s, (size_t)(colon - s));
    host[colon - s] = '\0';
    char *end = NULL;
    long port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || *end != '\0' || port < 1 || port > 65535)
        return false;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((unsigned short)port);
    return inet_pton(AF_INET, host, &sa->sin_addr) == 1;
}

/* The \n escape of -s, as bench-loadgen reads it. */
static char *unescape(const char *s)
{
    char *out = strdup(s), *o = out;
    if (out == NULL)
        die("strdup");
    for (; *s != '\0'; s++) {
        if (s[0] == '\\' && s[1] == 'n') {
            *o++ = '\n';
            s++;
        } else
            *o++ = *s;
    }
    *o = '\0';
    return out;
}

/* Every descriptor the hard limit allows; fail early if COUNT cannot fit. */
static void raise_nofile(int count)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        die("getrlimit");
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        die("setrlimit");
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (rlim_t)count + 32) {
        fprintf(stderr, "bench-idle: need %d descriptors, hard limit is %lu\n",
                count + 32, (unsigned long)rl.rlim_max);
        exit(1);
    }
}

/* A socket bound to src, closing with an RST; -1 on failure. */
static int open_socket(const struct sockaddr_in *src, bool nonblock)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0)
        return -1;
    int one = 1;
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    /* The port is chosen at connect(), per destination: no ephemeral-port shortage per source. */
    (void)setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) != 0 ||
        bind(fd, (const struct sockaddr *)src, sizeof *src) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* One check with text from src, its reply read: teaches lbagent that src sends text. */
static void teach(const struct sockaddr_in *dst, const struct sockaddr_in *src, const char *text)
{
    char buf[128], name[INET_ADDRSTRLEN];
    int fd = open_socket(src, false);
    struct timeval tv = {.tv_sec = TEACH_TIMEOUT_S, .tv_usec = 0};
    inet_ntop(AF_INET, &src->sin_addr, name, sizeof name);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0 ||
        connect(fd, (const struct sockaddr *)dst, sizeof *dst) != 0 ||
        send(fd, text, strlen(text), MSG_NOSIGNAL) < 0) {
        fprintf(stderr, "bench-idle: check from %s: %s\n", name, strerror(errno));
        exit(1);
    }
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
        fprintf(stderr, "bench-idle: check from %s: no reply\n", name);
        exit(1);
    }
    close(fd);
}

/* Opens one idle connection from src; -1 (counted as failed) if that fails at once. */
static int open_idle(const struct sockaddr_in *dst, const struct sockaddr_in *src)
{
    int fd = open_socket(src, true);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)dst, sizeof *dst) != 0 && errno != EINPROGRESS) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Closes a held connection; says whether it was open and whether a reply had come. */
static void close_idle(int fd, bool *ok, bool *answered)
{
    int err = 0;
    socklen_t len = sizeof err;
    struct sockaddr_in peer;
    socklen_t plen = sizeof peer;
    char c;
    *ok = getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0 &&
          getpeername(fd, (struct sockaddr *)&peer, &plen) == 0;
    *answered = *ok && recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) == 1;
    close(fd);
}

/* Sleeps until the monotonic time t, or until a signal. */
static void sleep_until(uint64_t t)
{
    struct timespec ts = {.tv_sec = (time_t)(t / NS_PER_S), .tv_nsec = (long)(t % NS_PER_S)};
    (void)clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

int main(int argc, char **argv)
{
    struct sockaddr_in dst, src[MAX_SOURCES];
    int nsrc = 0, count = 0, opt;
    long hold_ms = 1900;
    double max_s = 600;
    const char *text = NULL;
    bool have_dst = false;

    while ((opt = getopt(argc, argv, "a:n:b:l:d:s:")) != -1) {
        switch (opt) {
        case 'a': have_dst = parse_addr(optarg, &dst); if (!have_dst) usage(argv[0]); break;
        case 'n': count = atoi(optarg); break;
        case 'l': hold_ms = atol(optarg); break;
        case 'd': max_s = atof(optarg); break;
        case 's': text = unescape(optarg); break;
        case 'b': {
            char *list = strdup(optarg), *save = NULL;
            if (list == NULL)
                die("strdup");
            for (char *t = strtok_r(list, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
                if (nsrc == MAX_SOURCES)
                    usage(argv[0]);
                memset(&src[nsrc], 0, sizeof src[nsrc]);
                src[nsrc].sin_family = AF_INET;
                if (inet_pton(AF_INET, t, &src[nsrc].sin_addr) != 1)
                    usage(argv[0]);
                nsrc++;
            }
            free(list);
            break;
        }
        default: usage(argv[0]);
        }
    }
    if (!have_dst || optind != argc || count < 1 || count > MAX_COUNT || nsrc == 0 ||
        hold_ms < 10 || max_s <= 0)
        usage(argv[0]);
    raise_nofile(count);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
        die("sigaction");
    if (text != NULL)
        for (int i = 0; i < nsrc; i++)
            teach(&dst, &src[i], text);

    struct slot *slots = calloc((size_t)count, sizeof *slots);
    if (slots == NULL)
        die("calloc");
    uint64_t hold_ns = (uint64_t)hold_ms * NS_PER_MS, start = now_ns();
    uint64_t end = start + (uint64_t)(max_s * (double)NS_PER_S);
    for (int i = 0; i < count; i++) {
        slots[i].fd = -1;
        slots[i].due_ns = start + hold_ns * (uint64_t)i / (uint64_t)count;
    }

    /* The slots fall due in index order, round and round: no heap needed. */
    unsigned long long opened = 0, failed = 0, answered = 0;
    bool ready = false;
    int next = 0;
    while (!stop) {
        uint64_t now = now_ns();
        if (now >= end)
            break;
        while (slots[next].due_ns <= now) {
            struct slot *s = &slots[next];
            if (s->fd >= 0) {
                bool ok, got;
                close_idle(s->fd, &ok, &got);
                failed += !ok;
                answered += got;
            }
            s->fd = open_idle(&dst, &src[next % nsrc]);
            if (s->fd >= 0)
                opened++;
            else
                failed++;
            s->due_ns += hold_ns;
            if (++next == count) {
                next = 0;
                if (!ready) {
                    printf("ready held=%d\n", count);
                    fflush(stdout);
                    ready = true;
                }
            }
        }
        sleep_until(slots[next].due_ns < end ? slots[next].due_ns : end);
    }
    for (int i = 0; i < count; i++)
        if (slots[i].fd >= 0)
            close(slots[i].fd);
    printf("opened=%llu failed=%llu answered=%llu\n", opened, failed, answered);
    return 0;
}

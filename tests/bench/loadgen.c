/*
 * bench-loadgen: closed-loop load generator for HAProxy-style agent checks.
 *
 * Keeps exactly CONCURRENCY connections in flight, split over THREADS
 * independent epoll loops (default 1; see -t below).
 * Each one: non-blocking connect -> optional agent-send text -> read until a
 * newline or EOF -> close -> record the time from connect() to the reply ->
 * start the next one at once.  Connections that finish during the warmup are
 * not counted; the run stops itself after warmup + duration and prints
 *
 *   replies=N rps=R p50_us=X p99_us=Y errors=E max_us=M
 *
 * By default the client closes with SO_LINGER {1, 0}, i.e. with an RST, as
 * HAProxy ends its checks once the reply is in: no TIME_WAIT is left on
 * either side, so tens of thousands of connections per second do not exhaust
 * ephemeral ports.  -C closes plainly instead; TIME_WAIT then lands on
 * whichever side sent its FIN first: the server when its FIN arrived before
 * the client saw the newline, else the client (about 1:2 against the
 * reference server, tens of thousands of sockets after a few seconds).
 *
 * -t: on a 2-core machine one loop saturates its core while the reference
 * server idles about half the time, so one thread makes the client the
 * bottleneck and hides differences in server cost; two loops saturate the
 * machine, and a server's own CPU cost per connection then shows in rps.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ULL
#define CONN_TIMEOUT_NS (2 * NS_PER_S)
#define SCAN_INTERVAL_NS (100 * 1000000ULL)
#define MAX_REPLY 64
#define MAX_CONC 20000
#define MAX_THREADS 16

/* Why a connection counted as an error; reported on stderr when non-zero. */
enum err_kind { ERR_CONNECT, ERR_TIMEOUT, ERR_IO, ERR_EMPTY, ERR_MISMATCH, ERR_KINDS };

static const char *const err_names[ERR_KINDS] = {
    "connect", "timeout", "io", "empty", "mismatch",
};

struct options {
    struct sockaddr_storage addr;
    socklen_t addrlen;
    int conc;
    int threads;
    double duration_s;
    double warmup_s;
    char *send;
    size_t send_len;
    const char *expect;
    size_t expect_len;
    bool plain_close;
};

struct conn {
    int fd;               /* -1 while the slot is idle */
    bool connected;
    size_t sent;
    size_t got;
    uint64_t start_ns;
    char reply[MAX_REPLY];
};

struct samples {
    uint64_t *v;
    size_t n;
    size_t cap;
};

/* One event loop's state; each thread owns one, nothing is shared but opt. */
struct run {
    const struct options *opt;
    int conc;             /* this loop's share of the connections */
    int ep;
    struct conn *conns;
    int idle;             /* number of slots with fd == -1 */
    uint64_t measure_from;
    uint64_t stop_at;
    struct samples lat;
    uint64_t errors[ERR_KINDS];
};

/* Print what failed with errno and exit: setup failures end the run. */
static void die(const char *what)
{
    perror(what);
    exit(1);
}

/* Monotonic nanoseconds, the clock every latency and deadline uses. */
static uint64_t now_ns(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        die("clock_gettime");
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

/* One usage text for every option error. */
static void usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s -a HOST:PORT [-c CONC] [-t THREADS] [-d SECONDS] [-w SECONDS]\n"
            "          [-s TEXT] [-e EXPECT] [-C]\n"
            "  -c  connections kept in flight (default 64)\n"
            "  -t  event-loop threads sharing them (default 1)\n"
            "  -d  measured duration in seconds (default 5)\n"
            "  -w  warmup in seconds, not counted (default 1)\n"
            "  -s  text sent after connect; the two characters \\n mean newline\n"
            "  -e  prefix every reply must start with, else it is an error\n"
            "  -C  plain close() instead of an RST close (SO_LINGER 0)\n",
            prog);
    exit(2);
}

/* Integer option in [lo, hi], or usage. */
static int parse_int(const char *prog, const char *s, int lo, int hi)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi)
        usage(prog);
    return (int)v;
}

/* Seconds option (fractions allowed) in [lo, 3600], or usage. */
static double parse_seconds(const char *prog, const char *s, double lo)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !(v >= lo) || v > 3600.0)
        usage(prog);
    return v;
}

/* HOST:PORT or [HOST]:PORT, numeric or resolvable, into opt->addr. */
static void parse_addr(const char *prog, const char *s, struct options *opt)
{
    char host[256];
    const char *colon = strrchr(s, ':');
    if (colon == NULL || colon == s || (size_t)(colon - s) >= sizeof host)
        usage(prog);
    size_t hlen = (size_t)(colon - s);
    memcpy(host, s, hlen);
    host[hlen] = '\0';
    char *h = host;
    if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']') {
        host[hlen - 1] = '\0';
        h = host + 1;
    }
    struct addrinfo hints;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(h, colon + 1, &hints, &res);
    if (rc != 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, s, gai_strerror(rc));
        exit(2);
    }
    memcpy(&opt->addr, res->ai_addr, res->ai_addrlen);
    opt->addrlen = res->ai_addrlen;
    freeaddrinfo(res);
}

/* Turn the literal two characters \n into a newline, in place. */
static size_t unescape_newlines(char *s)
{
    size_t out = 0;
    for (size_t in = 0; s[in] != '\0'; in++) {
        if (s[in] == '\\' && s[in + 1] == 'n') {
            s[out++] = '\n';
            in++;
        } else {
            s[out++] = s[in];
        }
    }
    s[out] = '\0';
    return out;
}

/* Command line into options; exits with usage on anything malformed. */
static void parse_options(int argc, char **argv, struct options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->conc = 64;
    opt->threads = 1;
    opt->duration_s = 5.0;
    opt->warmup_s = 1.0;
    bool have_addr = false;
    int c;
    while ((c = getopt(argc, argv, "a:c:t:d:w:s:e:C")) != -1) {
        switch (c) {
        case 'a': parse_addr(argv[0], optarg, opt); have_addr = true; break;
        case 'c': opt->conc = parse_int(argv[0], optarg, 1, MAX_CONC); break;
        case 't': opt->threads = parse_int(argv[0], optarg, 1, MAX_THREADS); break;
        case 'd': opt->duration_s = parse_seconds(argv[0], optarg, 0.001); break;
        case 'w': opt->warmup_s = parse_seconds(argv[0], optarg, 0.0); break;
        case 's': opt->send = optarg; opt->send_len = unescape_newlines(optarg); break;
        case 'e': opt->expect = optarg; opt->expect_len = strlen(optarg); break;
        case 'C': opt->plain_close = true; break;
        default: usage(argv[0]);
        }
    }
    if (!have_addr || optind != argc || opt->expect_len > MAX_REPLY ||
        opt->threads > opt->conc)
        usage(argv[0]);
    if (opt->send_len == 0)
        opt->send = NULL;
}

/* Each in-flight connection is a descriptor; raise the soft limit if needed. */
static void ensure_fd_limit(int conc)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        die("getrlimit");
    rlim_t need = (rlim_t)conc + 32;
    if (rl.rlim_cur >= need)
        return;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
        fprintf(stderr, "bench-loadgen: need %lu descriptors, hard limit is %lu\n",
                (unsigned long)need, (unsigned long)rl.rlim_max);
        exit(1);
    }
    rl.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        die("setrlimit");
}

/* Append one latency; the array grows by doubling. */
static void samples_push(struct samples *s, uint64_t v)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 65536;
        uint64_t *nv = realloc(s->v, cap * sizeof *nv);
        if (nv == NULL)
            die("realloc");
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = v;
}

/* qsort comparator for uint64_t latencies. */
static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile (pct of 100) of a sorted array, in microseconds. */
static double percentile_us(const struct samples *s, unsigned pct)
{
    if (s->n == 0)
        return 0.0;
    size_t rank = (s->n * pct + 99) / 100;
    if (rank < 1)
        rank = 1;
    return (double)s->v[rank - 1] / 1000.0;
}

/* Replies and errors count only in the measured window [measure_from, stop_at). */
static bool in_window(const struct run *r, uint64_t t)
{
    return t >= r->measure_from && t < r->stop_at;
}

/* Count an error of the given kind if it happened inside the window. */
static void count_error(struct run *r, enum err_kind kind, uint64_t t)
{
    if (in_window(r, t))
        r->errors[kind]++;
}

/* Close a connection and mark its slot idle; the RST close (default) avoids TIME_WAIT. */
static void conn_close(struct run *r, struct conn *c)
{
    if (close(c->fd) != 0)
        perror("close");
    c->fd = -1;
    r->idle++;
}

/* Register a new socket: always for input, for output too if text must be sent. */
static void conn_watch(struct run *r, int idx)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = EPOLLIN | EPOLLET;
    if (r->opt->send != NULL)
        ev.events |= EPOLLOUT;
    ev.data.u32 = (uint32_t)idx;
    if (epoll_ctl(r->ep, EPOLL_CTL_ADD, r->conns[idx].fd, &ev) != 0)
        die("epoll_ctl");
}

/* Start a connection in an idle slot; a synchronous failure leaves it idle for a retry. */
static void conn_start(struct run *r, int idx)
{
    struct conn *c = &r->conns[idx];
    const struct options *opt = r->opt;
    int fd = socket(opt->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        count_error(r, ERR_CONNECT, now_ns());
        return;
    }
    if (!opt->plain_close) {
        struct linger lg = {.l_onoff = 1, .l_linger = 0};
        if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg) != 0)
            die("setsockopt SO_LINGER");
    }
    c->fd = fd;
    r->idle--;
    c->connected = false;
    c->sent = 0;
    c->got = 0;
    c->start_ns = now_ns();
    if (connect(fd, (const struct sockaddr *)&opt->addr, opt->addrlen) == 0) {
        c->connected = true;
    } else if (errno != EINPROGRESS) {
        count_error(r, ERR_CONNECT, c->start_ns);
        conn_close(r, c);
        return;
    }
    conn_watch(r, idx);
}

/* Fill every idle slot so exactly CONCURRENCY connections are in flight. */
static void refill(struct run *r)
{
    for (int i = 0; r->idle > 0 && i < r->conc; i++)
        if (r->conns[i].fd < 0)
            conn_start(r, i);
}

/* A connection ended: record its latency or its error, close it, start the next. */
static void conn_done(struct run *r, int idx, int err)
{
    struct conn *c = &r->conns[idx];
    uint64_t t = now_ns();
    if (err >= 0)
        count_error(r, (enum err_kind)err, t);
    else if (in_window(r, t))
        samples_push(&r->lat, t - c->start_ns);
    conn_close(r, c);
    if (t < r->stop_at)
        conn_start(r, idx);
}

/* Reply complete (newline or EOF): -1 if it is acceptable, else the error kind. */
static int judge_reply(const struct run *r, const struct conn *c)
{
    if (c->got == 0)
        return ERR_EMPTY;
    const struct options *opt = r->opt;
    if (opt->expect != NULL &&
        (c->got < opt->expect_len || memcmp(c->reply, opt->expect, opt->expect_len) != 0))
        return ERR_MISMATCH;
    return -1;
}

/* Send what is left of the agent-send text; failures surface when reading. */
static void conn_send(struct conn *c, const struct options *opt)
{
    while (c->sent < opt->send_len) {
        ssize_t n = send(c->fd, opt->send + c->sent, opt->send_len - c->sent, MSG_NOSIGNAL);
        if (n > 0) {
            c->sent += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            if (n < 0 && errno != EAGAIN)
                c->sent = opt->send_len;   /* peer gone; let the read report it */
            return;
        }
    }
}

/* Read what arrived: 1 when the reply is complete, 0 to wait, -1 on error (errno set). */
static int conn_read(struct conn *c)
{
    for (;;) {
        char buf[256];
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n > 0) {
            size_t room = MAX_REPLY - c->got;
            size_t take = (size_t)n < room ? (size_t)n : room;
            memcpy(c->reply + c->got, buf, take);
            c->got += take;
            if (memchr(buf, '\n', (size_t)n) != NULL)
                return 1;
            continue;
        }
        if (n == 0)
            return 1;
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN)
            return 0;
        return -1;
    }
}

/* Drive one connection forward on an epoll event (edge-triggered). */
static void conn_event(struct run *r, int idx, uint32_t events)
{
    struct conn *c = &r->conns[idx];
    const struct options *opt = r->opt;
    if (opt->send != NULL) {
        if (events & EPOLLOUT)
            c->connected = true;
        if (c->connected)
            conn_send(c, opt);
    }
    int st = conn_read(c);
    if (st == 1)
        conn_done(r, idx, judge_reply(r, c));
    else if (st < 0)
        conn_done(r, idx, errno == ECONNREFUSED ? ERR_CONNECT : ERR_IO);
    else if (events & EPOLLERR)
        conn_done(r, idx, ERR_IO);
}

/* Connections older than 2 s are errors; checked every 100 ms. */
static void expire(struct run *r, uint64_t t)
{
    for (int i = 0; i < r->conc; i++) {
        const struct conn *c = &r->conns[i];
        if (c->fd >= 0 && t - c->start_ns >= CONN_TIMEOUT_NS)
            conn_done(r, i, ERR_TIMEOUT);
    }
}

/* Milliseconds epoll may sleep before the next deadline (rounded up). */
static int wait_ms(uint64_t t, uint64_t deadline)
{
    if (deadline <= t)
        return 0;
    uint64_t ms = (deadline - t + 999999) / 1000000;
    return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* The event loop: runs until stop_at, keeping every slot busy. */
static void run_loop(struct run *r)
{
    struct epoll_event *evs = calloc((size_t)r->conc, sizeof *evs);
    if (evs == NULL)
        die("calloc");
    uint64_t next_scan = now_ns() + SCAN_INTERVAL_NS;
    for (uint64_t t = now_ns(); t < r->stop_at; t = now_ns()) {
        refill(r);
        uint64_t deadline = next_scan < r->stop_at ? next_scan : r->stop_at;
        int n = epoll_wait(r->ep, evs, r->conc, wait_ms(t, deadline));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; i++)
            conn_event(r, (int)evs[i].data.u32, evs[i].events);
        t = now_ns();
        if (t >= next_scan) {
            expire(r, t);
            next_scan = t + SCAN_INTERVAL_NS;
        }
    }
    free(evs);
}

/* Set up one loop's slots and epoll set; the deadlines are common to all loops. */
static void run_init(struct run *r, const struct options *opt, int conc,
                     uint64_t measure_from, uint64_t stop_at)
{
    memset(r, 0, sizeof *r);
    r->opt = opt;
    r->conc = conc;
    r->measure_from = measure_from;
    r->stop_at = stop_at;
    r->ep = epoll_create1(EPOLL_CLOEXEC);
    if (r->ep < 0)
        die("epoll_create1");
    r->conns = calloc((size_t)conc, sizeof *r->conns);
    if (r->conns == NULL)
        die("calloc");
    for (int i = 0; i < conc; i++)
        r->conns[i].fd = -1;
    r->idle = conc;
}

/* Thread body: run the loop, then drop the connections still in flight. */
static void *run_thread(void *arg)
{
    struct run *r = arg;
    run_loop(r);
    for (int i = 0; i < r->conc; i++)
        if (r->conns[i].fd >= 0)
            conn_close(r, &r->conns[i]);
    if (close(r->ep) != 0)
        perror("close");
    free(r->conns);
    return NULL;
}

/* Fold loop src's latencies and errors into dst once its thread has ended. */
static void run_merge(struct run *dst, struct run *src)
{
    for (size_t i = 0; i < src->lat.n; i++)
        samples_push(&dst->lat, src->lat.v[i]);
    for (int k = 0; k < ERR_KINDS; k++)
        dst->errors[k] += src->errors[k];
    free(src->lat.v);
    src->lat.v = NULL;
}

/* Print the one result line on stdout, and an error breakdown on stderr. */
static void report(struct run *r, uint64_t window_ns)
{
    if (r->lat.n > 0)
        qsort(r->lat.v, r->lat.n, sizeof *r->lat.v, cmp_u64);
    uint64_t errors = 0;
    for (int k = 0; k < ERR_KINDS; k++)
        errors += r->errors[k];
    double secs = (double)window_ns / (double)NS_PER_S;
    /* max_us came last, so the fields before it keep their places. */
    printf("replies=%zu rps=%.0f p50_us=%.1f p99_us=%.1f errors=%llu max_us=%.1f\n",
           r->lat.n, secs > 0 ? (double)r->lat.n / secs : 0.0,
           percentile_us(&r->lat, 50), percentile_us(&r->lat, 99),
           (unsigned long long)errors,
           r->lat.n > 0 ? (double)r->lat.v[r->lat.n - 1] / 1000.0 : 0.0);
    if (errors == 0)
        return;
    fprintf(stderr, "bench-loadgen: errors:");
    for (int k = 0; k < ERR_KINDS; k++)
        fprintf(stderr, " %s=%llu", err_names[k], (unsigned long long)r->errors[k]);
    fputc('\n', stderr);
}

/* Entry point: parse, run the loops for warmup + duration, merge, report. */
int main(int argc, char **argv)
{
    struct options opt;
    parse_options(argc, argv, &opt);
    ensure_fd_limit(opt.conc);

    uint64_t t0 = now_ns();
    uint64_t measure_from = t0 + (uint64_t)(opt.warmup_s * (double)NS_PER_S);
    uint64_t stop_at = measure_from + (uint64_t)(opt.duration_s * (double)NS_PER_S);

    struct run runs[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    for (int i = 0; i < opt.threads; i++) {
        int share = opt.conc / opt.threads + (i < opt.conc % opt.threads ? 1 : 0);
        run_init(&runs[i], &opt, share, measure_from, stop_at);
    }
    for (int i = 1; i < opt.threads; i++) {
        int rc = pthread_create(&tids[i], NULL, run_thread, &runs[i]);
        if (rc != 0) {
            errno = rc;
            die("pthread_create");
        }
    }
    run_thread(&runs[0]);
    for (int i = 1; i < opt.threads; i++) {
        int rc = pthread_join(tids[i], NULL);
        if (rc != 0) {
            errno = rc;
            die("pthread_join");
        }
        run_merge(&runs[0], &runs[i]);
    }
    report(&runs[0], stop_at - measure_from);
    free(runs[0].lat.v);
    return 0;
}

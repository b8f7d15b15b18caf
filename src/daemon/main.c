/*
 * lbagent: answers HAProxy's agent-check with what this node should get.
 * Start-up in dependency order, shutdown in reverse.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/daemon/agent.h"
#include "lbagent/sys/clock.h"
#include "lbagent/daemon/config.h"
#include "lbagent/sys/curl_loop.h"
#include "lbagent/daemon/http_api.h"
#include "lbagent/daemon/listener.h"
#include "lbagent/sys/log.h"
#include "lbagent/daemon/systemd.h"
#include "lbagent/probes/exec.h"

#ifndef LBAGENT_VERSION
#define LBAGENT_VERSION "unknown"
#endif

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: lbagent [-cd] [-f FILE]\n"
	    "       lbagent -V | -h | --keys\n"
	    "\n"
	    "Answers HAProxy's agent-check on this backend node.\n"
	    "\n"
	    "  -f FILE      configuration (default %s)\n"
	    "  -c           check the configuration: print 'configuration OK',\n"
	    "               or every error as FILE:LINE: message, and exit\n"
	    "  -d, --debug  log at debug level too (libcurl's words on failed\n"
	    "               probes, libevent's)\n"
	    "  -V, --version  print the version and exit\n"
	    "  -h, --help   this help\n"
	    "  --keys       print every configuration key with its default\n"
	    "\n"
	    "Runs in the foreground. SIGTERM or SIGINT stop it.\n",
	    CONFIG_DEFAULT_PATH);
}

/*
 * Both ports' connections and our own few: [agent] max_connections +
 * [http] max_connections + HTTP_NOFILE_RESERVE. The HTTP API takes at
 * most what the limit leaves after the agent port and the reserve (see
 * http_api.c), so it never starves probes or the agent port.
 */
static void
raise_nofile(uint64_t agent, uint64_t http)
{
	struct rlimit	rl;
	uint64_t	want = agent + http + HTTP_NOFILE_RESERVE;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ?
	    want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		log_warn("setrlimit(RLIMIT_NOFILE)");
	if (rl.rlim_cur < want)
		log_warnx("only %llu file descriptors allowed, %llu wanted: "
		    "the agent port (max_connections %llu) will pause "
		    "accepting earlier, the HTTP API gets what is left",
		    (unsigned long long)rl.rlim_cur, (unsigned long long)want,
		    (unsigned long long)agent);
}

/*
 * The loop, with precise timers: by default libevent reads the time from
 * CLOCK_MONOTONIC_COARSE, which moves in steps of a kernel tick (4 ms at
 * HZ=250), so that timers came due in batches: with thousands of agent
 * connections waiting for their request text, twenty replies at once
 * every 4 ms, a check queued behind them. With this flag libevent reads
 * CLOCK_MONOTONIC and sleeps on a timerfd, so each timer fires on time;
 * it sets the timerfd at every turn of the loop (docs/benchmarks.md
 * weighs that against a timerfd of the agent port's own).
 */
static struct event_base *
event_loop_new(void)
{
	struct event_config	*cfg;
	struct event_base	*base;

	if ((cfg = event_config_new()) == NULL)
		return NULL;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	/*
	 * After HTTP_DISPATCH_MAX callbacks of the HTTP API's priority the loop
	 * looks for new events: an agent check that came meanwhile runs next.
	 */
	event_config_set_max_dispatch_interval(cfg, NULL, HTTP_DISPATCH_MAX,
	    HTTP_PRIORITY);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	/* The agent port's events at the default, the HTTP API's below. */
	if (base != NULL &&
	    event_base_priority_init(base, HTTP_PRIORITIES) == -1) {
		event_base_free(base);
		return NULL;
	}
	return base;
}

static void
stop_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	log_notice("signal %d: stopping", (int)sig);
	systemd_stopping();
	event_base_loopbreak(arg);
}

#define NSIGNALS	3

/* What a reload replaces; main's, for hup_cb. */
struct daemon {
	struct event_base	*base;
	struct config		*cfg;
	struct agent		*agent;
	struct listener		*listener;
	struct http_api		*http;
	struct status_daemon	 dm;
	struct systemd_sockets	 sockets;
	struct probe_env	*env;
	struct event		*sigs[NSIGNALS];	/* TERM, INT, HUP */
};

static struct daemon	lbd;

/* Keeps a reload's outcome for /status (and lbagentctl reload). */
static void
reload_outcome(struct daemon *d, bool ok, const struct config_errors *errs)
{
	size_t	i;

	for (i = 0; i < d->dm.nreload_errors; i++)
		free(d->dm.reload_errors[i]);
	free(d->dm.reload_errors);
	d->dm.reload_errors = NULL;
	d->dm.nreload_errors = 0;
	if (errs != NULL && errs->count > 0 &&
	    (d->dm.reload_errors = calloc(errs->count, sizeof(char *))) != NULL)
		for (i = 0; i < errs->count; i++)
			if ((d->dm.reload_errors[d->dm.nreload_errors] =
			    strdup(errs->lines[i])) != NULL)
				d->dm.nreload_errors++;
	d->dm.reloads++;
	d->dm.has_reload = true;
	d->dm.reload_ok = ok;
	d->dm.reload_wall_ms = clock_wall_ms();
	if (ok)
		d->dm.reload_ok_wall_ms = d->dm.reload_wall_ms;
}

static void
reload_outcome_free(struct daemon *dd)
{
	size_t	i;

	for (i = 0; i < dd->dm.nreload_errors; i++)
		free(dd->dm.reload_errors[i]);
	free(dd->dm.reload_errors);
}

/*
 * A reload (SIGHUP, or POST /reload on a unix socket): a new
 * configuration, or none. Any error keeps the running one and says why; a
 * good one is swapped in without closing the ports that stay, and probes
 * and services that stay keep their state.
 */
static void
reload(struct daemon *d, const char *by)
{
	struct config_errors	 errs;
	struct config		*cfg;
	size_t			 i;

	systemd_reloading();
	log_notice("%s: reloading %s", by, d->cfg->path);
	cfg = config_load(d->cfg->path, &errs);
	for (i = 0; i < errs.nwarnings; i++)
		log_warnx("%s", errs.warnings[i]);
	if (cfg == NULL) {
		for (i = 0; i < errs.count; i++)
			log_errx("%s", errs.lines[i]);
		log_errx("reload failed: keeping the running configuration");
		reload_outcome(d, false, &errs);
		config_errors_free(&errs);
		systemd_ready();
		return;
	}
	config_errors_free(&errs);
	if (agent_reload(d->agent, cfg, d->cfg) == -1) {
		config_free(cfg);
		reload_outcome(d, false, NULL);
		systemd_ready();
		return;
	}
	listener_reload(d->listener, cfg);
	/* The API keeps the sockets that stay, and their connections. */
	http_api_reload(d->http, cfg);
	d->env->proc_root = cfg->proc_root;	/* probes read it at each run */
	config_free(d->cfg);
	d->cfg = cfg;
	reload_outcome(d, true, NULL);
	log_notice("reloaded %s", cfg->path);
	systemd_ready();
}

static void
hup_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	reload(arg, "SIGHUP");
}

/* The API calls it from the loop, after the request's reply is queued. */
static void
api_reload_cb(void *arg)
{
	reload(arg, "POST /reload");
}

/* What the command line asked for. */
struct args {
	const char	*path;		/* the configuration */
	int		 check;		/* -c: only check it */
};

/*
 * Reads the command line into a; -1 to go on, else the exit status (-h,
 * -V and --keys done, or a usage error).
 */
static int
parse_args(int argc, char *argv[], struct args *a)
{
	static const struct option longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "debug", no_argument, NULL, 'd' },
		{ "keys", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	int	ch;

	a->path = CONFIG_DEFAULT_PATH;
	a->check = 0;
	while ((ch = getopt_long(argc, argv, "cdf:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			a->check = 1;
			break;
		case 'd':
			log_set_debug(1);
			break;
		case 'f':
			a->path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'k':
			config_print_keys(stdout);
			return 0;
		case 'V':
			printf("lbagent %s\n", LBAGENT_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/*
 * Loads the configuration into d->cfg and reads LBAGENT_MODE
 * (*mode_env), then starts the log; -1 to go on, else the exit status:
 * -c's, or 1 when either has errors (said on stderr or in the log).
 */
static int
load_config(struct daemon *d, const struct args *a, int *mode_env)
{
	struct config_errors	errs;
	char			mode_bad[260];
	size_t			i;

	d->cfg = config_load(a->path, &errs);
	/* The kill switch must never be mistyped into "on". */
	if ((*mode_env = agent_mode_env(mode_bad, sizeof(mode_bad))) == -2) {
		fprintf(stderr, "lbagent: LBAGENT_MODE='%s': expected auto, "
		    "off or shadow\n", mode_bad);
		config_errors_free(&errs);
		config_free(d->cfg);
		return 1;
	}
	if (a->check) {
		config_errors_print(stdout, &errs);
		if (d->cfg != NULL)
			printf("configuration OK\n");
		config_errors_free(&errs);
		config_free(d->cfg);
		return d->cfg != NULL ? 0 : 1;
	}
	log_init("lbagent");
	/* What -c warns of, the log says at each start. */
	for (i = 0; i < errs.nwarnings; i++)
		log_warnx("%s", errs.warnings[i]);
	if (d->cfg == NULL) {
		for (i = 0; i < errs.count; i++)
			log_errx("%s", errs.lines[i]);
		log_errx("not starting: the configuration has errors");
		config_errors_free(&errs);
		return 1;
	}
	config_errors_free(&errs);
	return -1;
}

/*
 * The process's own settings: systemd's environment and sockets, signals,
 * limits. -1 (logged) when it must not start.
 */
static int
process_setup(struct daemon *d)
{
	log_notice("lbagent %s starting with %s", LBAGENT_VERSION, d->cfg->path);
	/* Before any thread: both read and clean up the environment. */
	systemd_init();
	if (systemd_listen_fds(&d->sockets) == -1) {
		log_errx("not starting: the sockets passed by systemd are "
		    "not usable");
		return -1;
	}
	systemd_status("starting");

	signal(SIGPIPE, SIG_IGN);
	/* What exec probes leave outside their groups comes back to us. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1)
		log_warn("prctl(PR_SET_CHILD_SUBREAPER)");
	/* Probe jitter differs from node to node and from start to start. */
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	raise_nofile(d->cfg->max_connections, d->cfg->http.max_connections);
	return 0;
}

/*
 * The loop and what runs on it, in dependency order: libcurl, the agent,
 * its port, the HTTP API, the signals, the watchdog. -1 (logged) on
 * failure; daemon_shutdown() frees what was made.
 */
static int
daemon_setup(struct daemon *d, struct probe_env *env, int mode_env)
{
	size_t	i;

	if ((d->base = event_loop_new()) == NULL) {
		log_errx("cannot create the event loop");
		return -1;
	}
	memset(env, 0, sizeof(*env));
	d->env = env;
	env->base = d->base;
	env->proc_root = d->cfg->proc_root;
	if ((env->curl = curl_loop_new(d->base)) == NULL) {
		log_errx("cannot start libcurl");
		return -1;
	}
	if ((d->agent = agent_new(d->base, d->cfg, env, mode_env)) == NULL) {
		log_errx("cannot start the agent");
		return -1;
	}
	d->listener = listener_new(d->base, d->cfg, d->agent, d->sockets.agent,
	    d->sockets.nagent);
	d->sockets.nagent = 0;	/* the listener's now, even when it failed */
	if (d->listener == NULL)
		return -1;
	d->http = http_api_new(d->base, d->cfg, d->agent, &d->dm,
	    d->sockets.http, d->sockets.nhttp);
	if (d->http == NULL)
		return -1;
	http_api_on_reload(d->http, api_reload_cb, d);
	d->sigs[0] = evsignal_new(d->base, SIGTERM, stop_cb, d->base);
	d->sigs[1] = evsignal_new(d->base, SIGINT, stop_cb, d->base);
	d->sigs[2] = evsignal_new(d->base, SIGHUP, hup_cb, d);
	for (i = 0; i < NSIGNALS; i++) {
		if (d->sigs[i] == NULL ||
		    evsignal_add(d->sigs[i], NULL) == -1) {
			log_errx("cannot install signal handlers");
			return -1;
		}
	}
	return systemd_watchdog_start(d->base);
}

/* Runs until a signal stops it; -1 (logged) if the loop failed. */
static int
daemon_run(struct daemon *d)
{
	/* Every port is accepting: checks that come now are answered. */
	systemd_ready();
	if (event_base_dispatch(d->base) == -1) {
		log_errx("event loop failed");
		return -1;
	}
	return 0;
}

/* Shutdown in reverse of the start; what was never made is skipped. */
static void
daemon_shutdown(struct daemon *d, struct probe_env *env)
{
	size_t	i;

	for (i = 0; i < NSIGNALS; i++)
		if (d->sigs[i] != NULL)
			event_free(d->sigs[i]);
	http_api_free(d->http);
	listener_free(d->listener);
	systemd_sockets_free(&d->sockets);
	agent_free(d->agent);
	curl_loop_free(env->curl);
	/* Cancelled exec runs' process groups die now, not a second later. */
	probe_exec_reap_all();
	systemd_close();	/* its timer goes before the loop does */
	if (d->base != NULL) {
		/* Callbacks of cancelled work (evdns lookups) free what they hold. */
		event_base_loop(d->base, EVLOOP_NONBLOCK);
		event_base_free(d->base);
	}
	log_notice("stopped");
	log_close();
	config_free(d->cfg);
	reload_outcome_free(d);
}

int
main(int argc, char *argv[])
{
	struct args		a;
	struct probe_env	env = { NULL, NULL, NULL };
	int			rc, mode_env;

	if ((rc = parse_args(argc, argv, &a)) != -1 ||
	    (rc = load_config(&lbd, &a, &mode_env)) != -1)
		return rc;
	rc = 1;
	if (process_setup(&lbd) == 0 &&
	    daemon_setup(&lbd, &env, mode_env) == 0 && daemon_run(&lbd) == 0)
		rc = 0;
	daemon_shutdown(&lbd, &env);
	return rc;
}

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
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/agent.h"
#include "lbagent/config.h"
#include "lbagent/curl_loop.h"
#include "lbagent/http_api.h"
#include "lbagent/listener.h"
#include "lbagent/log.h"
#include "lbagent/probe_exec.h"
#include "lbagent/systemd.h"

#ifndef LBAGENT_VERSION
#define LBAGENT_VERSION "unknown"
#endif

static void
usage(FILE *fp)
{
	fprintf(fp,
	    "usage: lbagent [-c] [-f FILE]\n"
	    "       lbagent -V | -h | --keys\n"
	    "\n"
	    "Answers HAProxy's agent-check on this backend node.\n"
	    "\n"
	    "  -f FILE      configuration (default %s)\n"
	    "  -c           check the configuration: print 'configuration OK',\n"
	    "               or every error as FILE:LINE: message, and exit\n"
	    "  -V, --version  print the version and exit\n"
	    "  -h, --help   this help\n"
	    "  --keys       print every configuration key with its default\n"
	    "\n"
	    "Runs in the foreground. SIGTERM or SIGINT stop it.\n",
	    CONFIG_DEFAULT_PATH);
}

/* The listener needs max_connections descriptors plus our own few. */
static void
raise_nofile(uint64_t want)
{
	struct rlimit	rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return;
	want += 64;
	if (rl.rlim_cur >= want)
		return;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ?
	    want : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		log_warn("setrlimit(RLIMIT_NOFILE)");
	if (rl.rlim_cur < want)
		log_warnx("only %llu file descriptors allowed; max_connections "
		    "%llu will pause accepting earlier",
		    (unsigned long long)rl.rlim_cur,
		    (unsigned long long)(want - 64));
}

static void
stop_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)what;
	log_notice("signal %d: stopping", (int)sig);
	systemd_stopping();
	event_base_loopbreak(arg);
}

static void
hup_cb(evutil_socket_t sig, short what, void *arg)
{
	(void)sig;
	(void)what;
	(void)arg;
	log_warnx("SIGHUP: this version does not reload its configuration; "
	    "restart lbagent to apply changes");
	/*
	 * A Type=notify-reload unit waits for this pair after its signal:
	 * the (empty) reload is over at once, rather than at its timeout.
	 */
	systemd_reloading();
	systemd_ready();
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "keys", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	const char		*path = CONFIG_DEFAULT_PATH;
	struct config_errors	 errs;
	struct config		*cfg;
	struct event_base	*base = NULL;
	struct agent		*agent = NULL;
	struct listener		*listener = NULL;
	struct http_api		*http = NULL;
	struct status_daemon	 dm;
	struct probe_env	 env = { NULL, NULL, NULL };
	struct event		*sigs[3] = { NULL, NULL, NULL };
	struct systemd_sockets	 sockets = { NULL, 0, NULL, 0 };
	int			 ch, check = 0, rc = 1, mode_env;
	char			 mode_bad[260];
	size_t			 i;

	while ((ch = getopt_long(argc, argv, "cf:hV", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			check = 1;
			break;
		case 'f':
			path = optarg;
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

	cfg = config_load(path, &errs);
	/* The kill switch must never be mistyped into "on". */
	if ((mode_env = agent_mode_env(mode_bad, sizeof(mode_bad))) == -2) {
		fprintf(stderr, "lbagent: LBAGENT_MODE='%s': expected auto or "
		    "off\n", mode_bad);
		config_errors_free(&errs);
		config_free(cfg);
		return 1;
	}
	if (check) {
		for (i = 0; i < errs.count; i++)
			printf("%s\n", errs.lines[i]);
		if (cfg != NULL)
			printf("configuration OK\n");
		config_errors_free(&errs);
		config_free(cfg);
		return cfg != NULL ? 0 : 1;
	}
	log_init("lbagent");
	if (cfg == NULL) {
		for (i = 0; i < errs.count; i++)
			log_errx("%s", errs.lines[i]);
		log_errx("not starting: the configuration has errors");
		config_errors_free(&errs);
		return 1;
	}
	config_errors_free(&errs);
	log_notice("lbagent %s starting with %s", LBAGENT_VERSION, cfg->path);
	/* Before any thread: both read and clean up the environment. */
	systemd_init();
	if (systemd_listen_fds(&sockets) == -1) {
		log_errx("not starting: the sockets passed by systemd are "
		    "not usable");
		goto out;
	}
	systemd_status("starting");

	signal(SIGPIPE, SIG_IGN);
	/* Probe jitter differs from node to node and from start to start. */
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	raise_nofile(cfg->max_connections);
	if ((base = event_base_new()) == NULL) {
		log_errx("cannot create the event loop");
		goto out;
	}
	memset(&env, 0, sizeof(env));
	env.base = base;
	env.proc_root = cfg->proc_root;
	if ((env.curl = curl_loop_new(base)) == NULL) {
		log_errx("cannot start libcurl");
		goto out;
	}
	if ((agent = agent_new(base, cfg, &env, mode_env)) == NULL) {
		log_errx("cannot start the agent");
		goto out;
	}
	listener = listener_new(base, cfg, agent, sockets.agent, sockets.nagent);
	sockets.nagent = 0;	/* the listener's now, even when it failed */
	if (listener == NULL)
		goto out;
	memset(&dm, 0, sizeof(dm));
	http = http_api_new(base, cfg, agent, &dm, sockets.http, sockets.nhttp);
	if (http == NULL)
		goto out;
	sigs[0] = evsignal_new(base, SIGTERM, stop_cb, base);
	sigs[1] = evsignal_new(base, SIGINT, stop_cb, base);
	sigs[2] = evsignal_new(base, SIGHUP, hup_cb, NULL);
	for (i = 0; i < 3; i++) {
		if (sigs[i] == NULL || evsignal_add(sigs[i], NULL) == -1) {
			log_errx("cannot install signal handlers");
			goto out;
		}
	}
	if (systemd_watchdog_start(base) == -1)
		goto out;
	/* Every port is accepting: checks that come now are answered. */
	systemd_ready();
	if (event_base_dispatch(base) == -1) {
		log_errx("event loop failed");
		goto out;
	}
	rc = 0;
out:
	for (i = 0; i < 3; i++)
		if (sigs[i] != NULL)
			event_free(sigs[i]);
	http_api_free(http);
	listener_free(listener);
	systemd_sockets_free(&sockets);
	agent_free(agent);
	curl_loop_free(env.curl);
	/* Cancelled exec runs' process groups die now, not a second later. */
	probe_exec_reap_all();
	systemd_close();	/* its timer goes before the loop does */
	if (base != NULL) {
		/* Callbacks of cancelled work (evdns lookups) free what they hold. */
		event_base_loop(base, EVLOOP_NONBLOCK);
		event_base_free(base);
	}
	log_notice("stopped");
	log_close();
	config_free(cfg);
	return rc;
}

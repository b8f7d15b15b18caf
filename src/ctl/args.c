/*
 * lbagentctl's command line: one table of commands gives parsing, the
 * checks of what goes with what, and the usage text.
 */
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lbagent/core/name.h"
#include "lbagent/core/units.h"
#include "lbagent/ctl/args.h"
#include "lbagent/ctl/markers.h"
#include "lbagent/daemon/config.h"

/* Options beyond the global ones that a command takes. */
#define OPT_JSON	0x1
#define OPT_REASON	0x2
#define OPT_SERVICE	0x4
#define OPT_SHORT	0x8
#define OPT_END		0x10	/* --for, --until */
#define OPT_WAIT	0x20

struct ctl_command {
	const char	*name;
	enum ctl_cmd	 cmd;
	unsigned	 opts;
	const char	*args;		/* for the usage line */
	const char	*help;
};

static const struct ctl_command commands[] = {
	{ "status", CTL_STATUS, OPT_JSON | OPT_SHORT,
	  "[--json | --short] [SERVICE]",
	  "what HAProxy is told now and why; SERVICE '-' is the default one" },
	{ "why", CTL_WHY, 0, "[SERVICE]",
	  "why the reply is what it is, and what would change it" },
	{ "fleet", CTL_FLEET, OPT_JSON, "[--json] [SERVICE]",
	  "every configured peer and this node: reply, liveness, the LBs" },
	{ "maint", CTL_MAINT, OPT_REASON | OPT_SERVICE | OPT_END | OPT_WAIT,
	  "on|off [--reason T] [--for D|--until T] [--service N]\n"
	  "                        [--wait [--timeout D]]",
	  "set or remove the maint marker, wait until lbagent answers so" },
	{ "drain", CTL_DRAIN, OPT_REASON | OPT_SERVICE | OPT_END | OPT_WAIT,
	  "on|off [--reason T] [--for D|--until T] [--service N]\n"
	  "                        [--wait [--timeout D]]",
	  "set or remove the drain marker, wait until lbagent answers so" },
	{ "mode", CTL_MODE, OPT_SERVICE, "auto|off [--service NAME]",
	  "switch automation off (the off marker) or back on" },
	{ "check", CTL_CHECK, 0, "[-f FILE]",
	  "check the configuration, as lbagent -c does" },
	{ "reload", CTL_RELOAD, 0, "",
	  "make lbagent reload its configuration (SIGHUP), show the result" },
};

#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

void
ctl_usage(FILE *fp, bool full)
{
	size_t	i;

	fprintf(fp, "usage: lbagentctl [-f CONFIG] [-s ADDRESS] [-t D] "
	    "COMMAND ...\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(fp, "       lbagentctl %s%s%s\n", commands[i].name,
		    commands[i].args[0] != '\0' ? " " : "", commands[i].args);
	fprintf(fp, "       lbagentctl -h | -V\n");
	if (!full)
		return;
	fprintf(fp, "\nControls the lbagent running on this node.\n\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(fp, "  %-7s %s\n", commands[i].name, commands[i].help);
	fprintf(fp,
	    "\n"
	    "  -f CONFIG    lbagent's configuration (default %s):\n"
	    "               state_dir for the markers, [http] for the API\n"
	    "  -s ADDRESS   the HTTP API: unix:/PATH, http://HOST:PORT or "
	    "HOST:PORT\n"
	    "               (default: the config's [http] listen, unix first)\n"
	    "  -t, --timeout D\n"
	    "               how long to wait for lbagent to show a change "
	    "(seconds, or\n"
	    "               90s, 5m; default %ds; with --wait %dm in all)\n"
	    "  --json       status, fleet: JSON\n"
	    "  --short      status: one line per service: reply, why, since\n"
	    "  --reason T   maint/drain on: the marker's first line\n"
	    "  --for D      maint/drain on: the marker ends after D (90s, 30m, "
	    "2h)\n"
	    "  --until T    maint/drain on: the marker ends at T (HH:MM local, "
	    "or ISO 8601\n"
	    "               with a zone: 2026-12-02T03:00Z)\n"
	    "  --service N  maint/drain/mode: only service N (default: node-wide)"
	    "\n"
	    "  --wait       maint/drain on: then wait until every load balancer "
	    "shows this\n"
	    "               node out of its traffic with no session and no "
	    "queue left\n"
	    "\n"
	    "Exit status: 0 done, 1 failed (lbagent not running, no change "
	    "within the\ntimeout, configuration errors), 2 usage, 4 --wait: "
	    "sessions or queue left at\nthe timeout; status and why: 0 every "
	    "service shown serving, 3 one not serving,\n1 no lbagent to ask.\n",
	    CONFIG_DEFAULT_PATH, CTL_TIMEOUT_DEFAULT_S,
	    CTL_WAIT_TIMEOUT_DEFAULT_S / 60);
}

static int
complain(char *why, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
complain(char *why, size_t size, const char *fmt, ...)
{
	va_list	ap;

	va_start(ap, fmt);
	vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return CTL_EXIT_USAGE;
}

static bool
one_line(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '\n' || *s == '\r')
			return false;
	return true;
}

/* Seconds ("2.5", as -t always took) or a duration ("90s", "5m"). */
static int
parse_timeout(const char *s, double *out)
{
	char		*end;
	const char	*why;
	uint64_t	 ms;
	double		 v;

	v = strtod(s, &end);
	if (end == s || *end != '\0') {
		if (units_duration_ms(s, &ms, &why) == -1)
			return -1;
		v = (double)ms / 1000.0;
	}
	if (!isfinite(v) || v <= 0 || v > 86400)
		return -1;
	*out = v;
	return 0;
}

int
ctl_parse_args(int argc, char *argv[], struct ctl_opts *o, char *why,
    size_t whysize)
{
	enum { LONG_JSON = 256, LONG_REASON, LONG_SERVICE, LONG_SHORT,
	    LONG_FOR, LONG_UNTIL, LONG_WAIT, LONG_TIMEOUT };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "address", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, LONG_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "json", no_argument, NULL, LONG_JSON },
		{ "short", no_argument, NULL, LONG_SHORT },
		{ "reason", required_argument, NULL, LONG_REASON },
		{ "service", required_argument, NULL, LONG_SERVICE },
		{ "for", required_argument, NULL, LONG_FOR },
		{ "until", required_argument, NULL, LONG_UNTIL },
		{ "wait", no_argument, NULL, LONG_WAIT },
		{ NULL, 0, NULL, 0 },
	};
	const struct ctl_command *c = NULL;
	char		 name_why[256];
	const char	*uwhy;
	int64_t		 until_ms;
	unsigned	 given = 0;
	char		*pos[4];
	size_t		 npos = 0, i;
	int		 ch;
	bool		 help = false, version = false;

	memset(o, 0, sizeof(*o));
	o->timeout_s = CTL_TIMEOUT_DEFAULT_S;
	why[0] = '\0';
	/* Options may come before or after the command (GNU permutation). */
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "-:f:s:t:hV", longopts,
	    NULL)) != -1) {
		switch (ch) {
		case 1:
			if (npos == sizeof(pos) / sizeof(pos[0]))
				return complain(why, whysize,
				    "too many arguments");
			pos[npos++] = optarg;
			break;
		case 'f':
			o->config = optarg;
			break;
		case 's':
			o->address = optarg;
			break;
		case 't':
		case LONG_TIMEOUT:
			if (parse_timeout(optarg, &o->timeout_s) == -1)
				return complain(why, whysize, "%s '%s': expected "
				    "seconds or a duration (90s, 5m), more than "
				    "0, at most 24h", ch == 't' ? "-t" :
				    "--timeout", optarg);
			o->timeout_given = true;
			break;
		case LONG_WAIT:
			o->wait = true;
			given |= OPT_WAIT;
			break;
		case 'h':
			help = true;
			break;
		case 'V':
			version = true;
			break;
		case LONG_JSON:
			o->json = true;
			given |= OPT_JSON;
			break;
		case LONG_SHORT:
			o->brief = true;
			given |= OPT_SHORT;
			break;
		case LONG_REASON:
			if (!one_line(optarg))
				return complain(why, whysize,
				    "--reason: one line of text");
			o->reason = optarg;
			given |= OPT_REASON;
			break;
		case LONG_FOR:
			if (units_duration_ms(optarg, &o->for_ms, &uwhy) == -1)
				return complain(why, whysize, "--for '%s': %s",
				    optarg, uwhy);
			if (o->for_ms == 0)
				return complain(why, whysize, "--for: more than "
				    "0 (leave it out for a marker without an "
				    "end)");
			given |= OPT_END;
			break;
		case LONG_UNTIL:
			if (ctl_until(optarg, time(NULL), &until_ms,
			    &uwhy) == -1)
				return complain(why, whysize, "--until '%s': %s",
				    optarg, uwhy);
			o->until = optarg;
			given |= OPT_END;
			break;
		case LONG_SERVICE:
			if (strcmp(optarg, "-") == 0 || optarg[0] == '\0' ||
			    strcmp(optarg, NAME_DEFAULT_SERVICE) == 0)
				return complain(why, whysize, "--service: the "
				    "default service has only the node-wide "
				    "markers; leave --service out for those");
			/* The configuration's check: no name of state_dir's. */
			if (name_service(optarg, name_why,
			    sizeof(name_why)) == -1)
				return complain(why, whysize, "--service '%s': %s",
				    optarg, name_why);
			o->service = optarg;
			given |= OPT_SERVICE;
			break;
		case ':':
			return complain(why, whysize, "%s needs a value",
			    argv[optind - 1]);
		default:
			if (optopt != 0 && optopt < 256)
				return complain(why, whysize,
				    "unknown option -%c", optopt);
			return complain(why, whysize, "unknown option %s",
			    argv[optind - 1]);
		}
	}
	if (help) {
		o->cmd = CTL_HELP;
		return 0;
	}
	if (version) {
		o->cmd = CTL_VERSION;
		return 0;
	}
	if (npos == 0)
		return complain(why, whysize, "a command is needed");
	for (i = 0; i < NCOMMANDS && c == NULL; i++)
		if (strcmp(pos[0], commands[i].name) == 0)
			c = &commands[i];
	if (c == NULL)
		return complain(why, whysize, "unknown command '%s'", pos[0]);
	o->cmd = c->cmd;
	if ((given & ~c->opts) != 0)
		return complain(why, whysize, "%s: %s does not go with it",
		    c->name, (given & ~c->opts & OPT_JSON) ? "--json" :
		    (given & ~c->opts & OPT_SHORT) ? "--short" :
		    (given & ~c->opts & OPT_REASON) ? "--reason" :
		    (given & ~c->opts & OPT_END) ? "--for or --until" :
		    (given & ~c->opts & OPT_WAIT) ? "--wait" : "--service");
	if (o->json && o->brief)
		return complain(why, whysize, "%s: --json or --short, not both",
		    c->name);

	switch (c->cmd) {
	case CTL_STATUS:
	case CTL_WHY:
	case CTL_FLEET:
		if (npos > 2)
			return complain(why, whysize, "%s: one SERVICE "
			    "at most", c->name);
		if (npos == 2) {
			if (strcmp(pos[1], "-") == 0 ||
			    strcmp(pos[1], NAME_DEFAULT_SERVICE) == 0)
				o->service = "";
			else if (name_service(pos[1], name_why,
			    sizeof(name_why)) == -1)
				return complain(why, whysize, "%s: '%s' is "
				    "not a service name: %s ('-' or '"
				    NAME_DEFAULT_SERVICE "' is the default "
				    "service)", c->name, pos[1], name_why);
			else
				o->service = pos[1];
		}
		break;
	case CTL_MAINT:
	case CTL_DRAIN:
		if (npos != 2 || (strcmp(pos[1], "on") != 0 &&
		    strcmp(pos[1], "off") != 0))
			return complain(why, whysize, "%s: on or off", c->name);
		o->on = strcmp(pos[1], "on") == 0;
		if (!o->on && o->reason != NULL)
			return complain(why, whysize, "%s off: --reason goes "
			    "with 'on'", c->name);
		if (!o->on && (given & OPT_END))
			return complain(why, whysize, "%s off: --for and "
			    "--until go with 'on'", c->name);
		if (o->for_ms != 0 && o->until != NULL)
			return complain(why, whysize, "%s: --for or --until, "
			    "not both", c->name);
		/* Nothing to drain away from once the marker is gone. */
		if (!o->on && o->wait)
			return complain(why, whysize, "%s off: --wait goes "
			    "with 'on'", c->name);
		if (o->wait && !o->timeout_given)
			o->timeout_s = CTL_WAIT_TIMEOUT_DEFAULT_S;
		break;
	case CTL_MODE:
		if (npos != 2 || (strcmp(pos[1], "auto") != 0 &&
		    strcmp(pos[1], "off") != 0))
			return complain(why, whysize, "mode: auto or off");
		/* "on" means the marker is there: automation off. */
		o->on = strcmp(pos[1], "off") == 0;
		break;
	case CTL_CHECK:
	case CTL_RELOAD:
		if (npos != 1)
			return complain(why, whysize, "%s takes no arguments",
			    c->name);
		break;
	default:
		break;
	}
	return 0;
}

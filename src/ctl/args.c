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
#define OPT_FORCE	0x40	/* maint, drain on: even the last node */

struct ctl_command;

/* The command line as it is parsed: what came, and where to say why not. */
struct parse {
	struct ctl_opts	*o;
	char		*pos[4];	/* the command and its arguments */
	size_t		 npos;
	unsigned	 given;		/* OPT_* seen */
	bool		 help, version;
	char		*why;
	size_t		 whysize;
};

/* A command's check of its arguments (pos[1]...): 0 or CTL_EXIT_USAGE. */
typedef int	 args_fn(struct parse *, const struct ctl_command *);

static args_fn	 args_service, args_marker, args_mode, args_none;

struct ctl_command {
	const char	*name;
	enum ctl_cmd	 cmd;
	unsigned	 opts;
	const char	*args;		/* for the usage line */
	const char	*help;
	args_fn		*check;
};

static const struct ctl_command commands[] = {
	{ "status", CTL_STATUS, OPT_JSON | OPT_SHORT,
	  "[--json | --short] [SERVICE]",
	  "what HAProxy is told now and why; SERVICE '-' is the default one",
	  args_service },
	{ "why", CTL_WHY, 0, "[SERVICE]",
	  "why the reply is what it is, and what would change it",
	  args_service },
	{ "fleet", CTL_FLEET, OPT_JSON, "[--json] [SERVICE]",
	  "every configured peer and this node: reply, liveness, the LBs",
	  args_service },
	{ "maint", CTL_MAINT, OPT_REASON | OPT_SERVICE | OPT_END | OPT_WAIT |
	  OPT_FORCE,
	  "on|off [--reason T] [--for D|--until T] [--service N]\n"
	  "                        [--wait [--timeout D]] [--force]",
	  "set or remove the maint marker, wait until lbagent answers so",
	  args_marker },
	{ "drain", CTL_DRAIN, OPT_REASON | OPT_SERVICE | OPT_END | OPT_WAIT |
	  OPT_FORCE,
	  "on|off [--reason T] [--for D|--until T] [--service N]\n"
	  "                        [--wait [--timeout D]] [--force]",
	  "set or remove the drain marker, wait until lbagent answers so",
	  args_marker },
	{ "mode", CTL_MODE, OPT_SERVICE, "auto|off [--service NAME]",
	  "switch automation off (the off marker) or back on", args_mode },
	{ "check", CTL_CHECK, 0, "[-f FILE]",
	  "check the configuration, as lbagent -c does", args_none },
	{ "reload", CTL_RELOAD, 0, "",
	  "make lbagent reload its configuration (SIGHUP), show the result",
	  args_none },
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

enum { LONG_JSON = 256, LONG_REASON, LONG_SERVICE, LONG_SHORT, LONG_FOR,
    LONG_UNTIL, LONG_WAIT, LONG_TIMEOUT, LONG_FORCE };

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
	{ "force", no_argument, NULL, LONG_FORCE },
	{ NULL, 0, NULL, 0 },
};

/* --for D: a duration above 0. */
static int
opt_for(struct parse *p, const char *arg)
{
	const char	*uwhy;

	if (units_duration_ms(arg, &p->o->for_ms, &uwhy) == -1)
		return complain(p->why, p->whysize, "--for '%s': %s", arg,
		    uwhy);
	if (p->o->for_ms == 0)
		return complain(p->why, p->whysize, "--for: more than 0 (leave "
		    "it out for a marker without an end)");
	p->given |= OPT_END;
	return 0;
}

/* --until T: a time ctl_until understands. */
static int
opt_until(struct parse *p, const char *arg)
{
	const char	*uwhy;
	int64_t		 until_ms;

	if (ctl_until(arg, time(NULL), &until_ms, &uwhy) == -1)
		return complain(p->why, p->whysize, "--until '%s': %s", arg,
		    uwhy);
	p->o->until = arg;
	p->given |= OPT_END;
	return 0;
}

/* --service N: a service of the configuration's, not the default one. */
static int
opt_service(struct parse *p, const char *arg)
{
	char	name_why[256];

	if (strcmp(arg, "-") == 0 || arg[0] == '\0' ||
	    strcmp(arg, NAME_DEFAULT_SERVICE) == 0)
		return complain(p->why, p->whysize, "--service: the default "
		    "service has only the node-wide markers; leave --service "
		    "out for those");
	/* The configuration's check: no name of state_dir's. */
	if (name_service(arg, name_why, sizeof(name_why)) == -1)
		return complain(p->why, p->whysize, "--service '%s': %s", arg,
		    name_why);
	p->o->service = arg;
	p->given |= OPT_SERVICE;
	return 0;
}

/* An option getopt_long could not take. */
static int
opt_bad(struct parse *p, int ch, char *argv[])
{
	if (ch == ':')
		return complain(p->why, p->whysize, "%s needs a value",
		    argv[optind - 1]);
	if (optopt != 0 && optopt < 256)
		return complain(p->why, p->whysize, "unknown option -%c",
		    optopt);
	return complain(p->why, p->whysize, "unknown option %s",
	    argv[optind - 1]);
}

/* One option or argument from getopt_long: 0 or CTL_EXIT_USAGE. */
static int
parse_option(struct parse *p, int ch, char *argv[])
{
	struct ctl_opts	*o = p->o;

	switch (ch) {
	case 1:
		if (p->npos == sizeof(p->pos) / sizeof(p->pos[0]))
			return complain(p->why, p->whysize,
			    "too many arguments");
		p->pos[p->npos++] = optarg;
		return 0;
	case 'f':
		o->config = optarg;
		return 0;
	case 's':
		o->address = optarg;
		return 0;
	case 't':
	case LONG_TIMEOUT:
		if (parse_timeout(optarg, &o->timeout_s) == -1)
			return complain(p->why, p->whysize, "%s '%s': expected "
			    "seconds or a duration (90s, 5m), more than 0, at "
			    "most 24h", ch == 't' ? "-t" : "--timeout", optarg);
		o->timeout_given = true;
		return 0;
	case LONG_WAIT:
		o->wait = true;
		p->given |= OPT_WAIT;
		return 0;
	case LONG_FORCE:
		o->force = true;
		p->given |= OPT_FORCE;
		return 0;
	case 'h':
		p->help = true;
		return 0;
	case 'V':
		p->version = true;
		return 0;
	case LONG_JSON:
		o->json = true;
		p->given |= OPT_JSON;
		return 0;
	case LONG_SHORT:
		o->brief = true;
		p->given |= OPT_SHORT;
		return 0;
	case LONG_REASON:
		if (!one_line(optarg))
			return complain(p->why, p->whysize,
			    "--reason: one line of text");
		o->reason = optarg;
		p->given |= OPT_REASON;
		return 0;
	case LONG_FOR:
		return opt_for(p, optarg);
	case LONG_UNTIL:
		return opt_until(p, optarg);
	case LONG_SERVICE:
		return opt_service(p, optarg);
	default:
		return opt_bad(p, ch, argv);
	}
}

/* status, why, fleet: one SERVICE at most, '-' for the default one. */
static int
args_service(struct parse *p, const struct ctl_command *c)
{
	char	name_why[256];

	if (p->npos > 2)
		return complain(p->why, p->whysize, "%s: one SERVICE at most",
		    c->name);
	if (p->npos < 2)
		return 0;
	if (strcmp(p->pos[1], "-") == 0 ||
	    strcmp(p->pos[1], NAME_DEFAULT_SERVICE) == 0)
		p->o->service = "";
	else if (name_service(p->pos[1], name_why, sizeof(name_why)) == -1)
		return complain(p->why, p->whysize, "%s: '%s' is not a service "
		    "name: %s ('-' or '" NAME_DEFAULT_SERVICE "' is the "
		    "default service)", c->name, p->pos[1], name_why);
	else
		p->o->service = p->pos[1];
	return 0;
}

/* maint, drain: on or off, and what goes with on only. */
static int
args_marker(struct parse *p, const struct ctl_command *c)
{
	struct ctl_opts	*o = p->o;

	if (p->npos != 2 || (strcmp(p->pos[1], "on") != 0 &&
	    strcmp(p->pos[1], "off") != 0))
		return complain(p->why, p->whysize, "%s: on or off", c->name);
	o->on = strcmp(p->pos[1], "on") == 0;
	if (!o->on && o->reason != NULL)
		return complain(p->why, p->whysize, "%s off: --reason goes "
		    "with 'on'", c->name);
	if (!o->on && (p->given & OPT_END))
		return complain(p->why, p->whysize, "%s off: --for and "
		    "--until go with 'on'", c->name);
	if (o->for_ms != 0 && o->until != NULL)
		return complain(p->why, p->whysize, "%s: --for or --until, "
		    "not both", c->name);
	/* Nothing to drain away from once the marker is gone. */
	if (!o->on && o->wait)
		return complain(p->why, p->whysize, "%s off: --wait goes "
		    "with 'on'", c->name);
	if (o->wait && !o->timeout_given)
		o->timeout_s = CTL_WAIT_TIMEOUT_DEFAULT_S;
	return 0;
}

/* mode: auto or off. */
static int
args_mode(struct parse *p, const struct ctl_command *c)
{
	(void)c;
	if (p->npos != 2 || (strcmp(p->pos[1], "auto") != 0 &&
	    strcmp(p->pos[1], "off") != 0))
		return complain(p->why, p->whysize, "mode: auto or off");
	/* "on" means the marker is there: automation off. */
	p->o->on = strcmp(p->pos[1], "off") == 0;
	return 0;
}

/* check, reload: nothing after the command. */
static int
args_none(struct parse *p, const struct ctl_command *c)
{
	if (p->npos != 1)
		return complain(p->why, p->whysize, "%s takes no arguments",
		    c->name);
	return 0;
}

/* The first option given that the command does not take, in words. */
static const char *
not_taken(unsigned extra)
{
	return (extra & OPT_JSON) ? "--json" :
	    (extra & OPT_SHORT) ? "--short" :
	    (extra & OPT_REASON) ? "--reason" :
	    (extra & OPT_END) ? "--for or --until" :
	    (extra & OPT_WAIT) ? "--wait" :
	    (extra & OPT_FORCE) ? "--force" : "--service";
}

int
ctl_parse_args(int argc, char *argv[], struct ctl_opts *o, char *why,
    size_t whysize)
{
	struct parse			 p = { .o = o, .why = why,
					    .whysize = whysize };
	const struct ctl_command	*c = NULL;
	size_t				 i;
	int				 ch, rc;

	memset(o, 0, sizeof(*o));
	o->timeout_s = CTL_TIMEOUT_DEFAULT_S;
	why[0] = '\0';
	/* Options may come before or after the command (GNU permutation). */
	optind = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "-:f:s:t:hV", longopts,
	    NULL)) != -1)
		if ((rc = parse_option(&p, ch, argv)) != 0)
			return rc;
	if (p.help) {
		o->cmd = CTL_HELP;
		return 0;
	}
	if (p.version) {
		o->cmd = CTL_VERSION;
		return 0;
	}
	if (p.npos == 0)
		return complain(why, whysize, "a command is needed");
	for (i = 0; i < NCOMMANDS && c == NULL; i++)
		if (strcmp(p.pos[0], commands[i].name) == 0)
			c = &commands[i];
	if (c == NULL)
		return complain(why, whysize, "unknown command '%s'", p.pos[0]);
	o->cmd = c->cmd;
	if ((p.given & ~c->opts) != 0)
		return complain(why, whysize, "%s: %s does not go with it",
		    c->name, not_taken(p.given & ~c->opts));
	if (o->json && o->brief)
		return complain(why, whysize, "%s: --json or --short, not both",
		    c->name);
	return c->check(&p, c);
}

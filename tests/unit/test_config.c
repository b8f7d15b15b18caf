/* The configuration: defaults, every error path with its line, the docs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/core/name.h"
#include "lbagent/core/service.h"
#include "lbagent/daemon/config.h"
#include "lbagent/probes/probe.h"
#include "testutil.h"

static char	*dir;

static void
setup(void)
{
	dir = tu_tmpdir();
}

static void
teardown(void)
{
	tu_rmtree(dir);
	free(dir);
}

/* Loads text; returns the config (or NULL) and fills errs. */
static struct config *
load(const char *text, struct config_errors *errs, char **pathp)
{
	char		*path = tu_write(dir, "t.conf", text, -1);
	struct config	*cfg = config_load(path, errs);

	if (pathp != NULL)
		*pathp = path;
	else
		free(path);
	return cfg;
}

/* Expects exactly one error, "PATH:LINE: msg". */
static void
expect_error(const char *text, unsigned line, const char *msg)
{
	struct config_errors	 errs;
	struct config		*cfg;
	char			*path, *want;

	cfg = load(text, &errs, &path);
	ck_assert_ptr_null(cfg);
	ck_assert_int_ne(asprintf(&want, "%s:%u: %s", path, line, msg), -1);
	ck_assert_msg(errs.count == 1, "%zu errors for:\n%s\nfirst: %s",
	    errs.count, text, errs.count ? errs.lines[0] : "");
	ck_assert_str_eq(errs.lines[0], want);
	free(want);
	free(path);
	config_errors_free(&errs);
}

/*
 * The default service with no probes says up whatever happens: warned at
 * the [agent] line (1 without one), unless no_probes = yes says it is
 * meant; a probe no service names gives it one.
 */
START_TEST(default_without_probes)
{
	struct config_errors	 errs;
	struct config		*cfg;

	cfg = load("; no probe for the default\n[agent]\nnode_id = n1\n"
	    "[probe p]\ntype = file\npath = /x\n"
	    "[service web]\nprobes = p\n", &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	ck_assert_uint_eq(errs.nwarnings, 1);
	ck_assert_msg(strstr(errs.warnings[0], ":2: warning: the default "
	    "service (no agent-send, `default`, or a name no [service] has) "
	    "has no probes: it says up unless a marker says otherwise") !=
	    NULL, "%s", errs.warnings[0]);
	ck_assert_msg(strstr(errs.warnings[0], "no_probes = yes in [agent]")
	    != NULL, "%s", errs.warnings[0]);
	config_free(cfg);
	config_errors_free(&errs);

	cfg = load("[agent]\nnode_id = n1\nno_probes = yes\n", &errs, NULL);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_uint_eq(errs.nwarnings, 0);
	config_free(cfg);
	config_errors_free(&errs);

	cfg = load("[probe p]\ntype = file\npath = /x\n", &errs, NULL);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_uint_eq(errs.nwarnings, 0);
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

/*
 * A [service] that names no backend is judged against [haproxy]'s: warned
 * with its line, and where each backend is said is kept for the status.
 */
START_TEST(backend_inherited)
{
	struct config_errors	 errs;
	struct config		*cfg;

	cfg = load("[agent]\nnode_id = n1\n"
	    "[haproxy]\nsources = unix:/run/haproxy/admin.sock\n"
	    "backend = app\n"
	    "[probe p]\ntype = file\npath = /x\n"
	    "[service web]\nprobes = p\n"
	    "[service api]\nprobes = p\nbackend = api_be\n"
	    "[service same]\nprobes = p\nbackend = app\n"
	    "[probe own]\ntype = file\npath = /y\n", &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	ck_assert_uint_eq(cfg->backend_line, 5);
	ck_assert_uint_eq(errs.nwarnings, 1);
	ck_assert_msg(strstr(errs.warnings[0], ":9: warning: [service web]: "
	    "judged against backend app, inherited from [haproxy] backend "
	    "(line 5): name its own (backend = ...), or backend = app to keep "
	    "it") != NULL, "%s", errs.warnings[0]);
	ck_assert_str_eq(cfg->services[0].transitions.backend, "app");
	ck_assert(cfg->services[0].backend_inherited);
	ck_assert_uint_eq(cfg->services[0].backend_line, 5);
	ck_assert(!cfg->services[1].backend_inherited);
	ck_assert_uint_eq(cfg->services[1].backend_line, 13);
	/* Named, even as [haproxy]'s own: meant, no warning. */
	ck_assert(!cfg->services[2].backend_inherited);
	ck_assert_uint_eq(cfg->services[2].backend_line, 16);
	config_free(cfg);
	config_errors_free(&errs);

	/* No backend anywhere: nothing inherited, nothing to say. */
	cfg = load("[probe p]\ntype = file\npath = /x\n"
	    "[service web]\nprobes = p\n[probe own]\ntype = file\n"
	    "path = /y\n", &errs, NULL);
	ck_assert_ptr_nonnull(cfg);
	ck_assert_uint_eq(errs.nwarnings, 0);
	ck_assert(!cfg->services[0].backend_inherited);
	ck_assert_uint_eq(cfg->services[0].backend_line, 0);
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

START_TEST(defaults)
{
	struct config_errors	 errs;
	struct config		*cfg = load("[agent]\n", &errs, NULL);

	ck_assert_ptr_nonnull(cfg);
	ck_assert_uint_eq(errs.count, 0);
	ck_assert_uint_eq(cfg->listen.count, 1);
	ck_assert_str_eq(cfg->listen.addr[0].host, "");
	ck_assert_str_eq(cfg->listen.addr[0].port, "9505");
	ck_assert_str_eq(cfg->state_dir, "/var/lib/lbagent");
	ck_assert_uint_eq(cfg->max_connections, 1024);
	ck_assert_uint_eq(cfg->http.per_address, 0);	/* the share */
	ck_assert(cfg->reply_reasons);
	ck_assert_uint_eq(cfg->lb_forget_after_ms, 600000);
	config_free(cfg);
	config_errors_free(&errs);

	/* An empty file is a valid file. */
	cfg = load("", &errs, NULL);
	ck_assert_ptr_nonnull(cfg);
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

START_TEST(every_key_set)
{
	struct config_errors	 errs;
	struct config		*cfg;

	cfg = load("; comment\n# another\n\n[agent]\n"
	    "listen = 127.0.0.1:9505, [::1]:9506 ,*:9507\n"
	    "state_dir = /tmp/x\n"
	    "max_connections = 8 ; inline comment\n"
	    "reply_reasons = off\n"
	    "lb_forget_after = 90s\n", &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	ck_assert_uint_eq(cfg->listen.count, 3);
	ck_assert_str_eq(cfg->listen.addr[0].host, "127.0.0.1");
	ck_assert_str_eq(cfg->listen.addr[0].port, "9505");
	ck_assert_str_eq(cfg->listen.addr[1].host, "::1");
	ck_assert_str_eq(cfg->listen.addr[1].port, "9506");
	ck_assert_str_eq(cfg->listen.addr[2].host, "");
	ck_assert_str_eq(cfg->listen.addr[2].text, "*:9507");
	ck_assert_str_eq(cfg->state_dir, "/tmp/x");
	ck_assert_uint_eq(cfg->max_connections, 8);
	ck_assert(!cfg->reply_reasons);
	ck_assert_uint_eq(cfg->lb_forget_after_ms, 90000);
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

START_TEST(error_paths)
{
	expect_error("[agent]\nlisten = *:9505\nbogus = 1\n", 3,
	    "unknown key 'bogus' in [agent]");
	expect_error("[agent]\n\n[nope]\nx = 1\n", 3,
	    "unknown section [nope] (known: [agent], [probe NAME], [service NAME], [http], [peers], [haproxy])");
	expect_error("listen = *:1\n", 1,
	    "listen: key outside any section (expected [agent] first)");
	expect_error("[agent]\nlb_forget_after = 10\n", 2,
	    "lb_forget_after: duration needs a unit: ms, s, m or h: '10'");
	expect_error("[agent]\nlb_forget_after = 10x\n", 2,
	    "lb_forget_after: unknown duration unit (use ms, s, m or h): '10x'");
	expect_error("[agent]\nlb_forget_after = 500ms\n", 2,
	    "lb_forget_after: '500ms' out of range (1s to 168h)");
	expect_error("[agent]\nreply_reasons = maybe\n", 2,
	    "reply_reasons: expected yes, no, true, false, on or off: 'maybe'");
	expect_error("[agent]\nmax_connections = 0\n", 2,
	    "max_connections: '0' out of range (1 to 65536)");
	expect_error("[agent]\nmax_connections = lots\n", 2,
	    "max_connections: expected a whole number: 'lots'");
	expect_error("[http]\nper_address = 0\n", 2,
	    "per_address: '0' out of range (1 to 65536)");
	expect_error("[agent]\nstate_dir = relative/dir\n", 2,
	    "state_dir: must be an absolute path: 'relative/dir'");
	expect_error("[agent]\nstate_dir =\n", 2, "state_dir: empty value");
	expect_error("[agent]\nlisten = 9505\n", 2,
	    "listen: expected ADDR:PORT, e.g. *:9505 or 127.0.0.1:9505: '9505'");
	expect_error("[agent]\nlisten = localhost:9505\n", 2,
	    "listen: not a numeric IPv4 address, '*' or [IPv6]: 'localhost:9505'");
	expect_error("[agent]\nlisten = ::1:9505\n", 2,
	    "listen: not a numeric IPv4 address, '*' or [IPv6]: '::1:9505'");
	expect_error("[agent]\nlisten = [::1]9505\n", 2,
	    "listen: expected [IPv6]:PORT: '[::1]9505'");
	expect_error("[agent]\nlisten = *:70000\n", 2,
	    "listen: port must be a number from 1 to 65535: '*:70000'");
	expect_error("[agent]\nlisten = *:0\n", 2,
	    "listen: port must be a number from 1 to 65535: '*:0'");
	expect_error("[agent]\nlisten = ,\n", 2,
	    "listen: an empty address in the list: ','");
	expect_error("[agent]\nlisten = *:1, ,\n", 2,
	    "listen: an empty address in the list: '*:1, ,'");
	expect_error("[agent]\nmax_connections = 5\nmax_connections = 6\n", 3,
	    "max_connections: given twice (first on line 2)");
	expect_error("[agent]\njust some words\n", 2, "expected 'key = value'");
	expect_error("[agent]\nlisten: *:9505\n", 2,
	    "expected 'key = value' (':' is not a separator)");
	expect_error("[agent]\nlisten = *:9505\n  *:9506\n", 3,
	    "continuation lines are not supported; keep a value on one line");
	expect_error("[agent\n", 1, "section header without ']'");
}
END_TEST

START_TEST(probe_and_service_sections)
{
	struct config_errors	 errs;
	struct config		*cfg;
	const struct probe_conf	*pc;

	cfg = load("[agent]\n"
	    "[probe api]\n"
	    "url = http://127.0.0.1:8080/health\n"
	    "type = http\n"			/* type may come after other keys */
	    "header = X-A: 1\n"
	    "header = X-B: 2\n"		/* repeatable */
	    "interval = 10s\n"
	    "timeout = 3s\n"
	    "on_warn = 75%\n"
	    "on_crit = drain\n"
	    "fall = 3\n"
	    "rise = 2\n"
	    "[probe root]\n"
	    "type = disk\n"
	    "path = /\n"
	    "[service web]\n"
	    "probes = api, root\n"
	    "listen = 127.0.0.1:9600\n", &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	ck_assert_uint_eq(cfg->nprobes, 2);
	pc = config_probe(cfg, "api");
	ck_assert_ptr_nonnull(pc);
	ck_assert_str_eq(pc->ops->name, "http");
	ck_assert_uint_eq(pc->interval_ms, 10000);
	ck_assert_uint_eq(pc->timeout_ms, 3000);
	ck_assert_int_eq(pc->on_warn.kind, REACT_WEIGHT);
	ck_assert_uint_eq(pc->on_warn.weight, 75);
	ck_assert_int_eq(pc->on_crit.kind, REACT_DRAIN);
	ck_assert_uint_eq(pc->fall, 3);
	ck_assert_uint_eq(pc->rise, 2);
	pc = config_probe(cfg, "root");
	ck_assert_uint_eq(pc->interval_ms, 5000);
	ck_assert_uint_eq(pc->timeout_ms, 2000);
	ck_assert_int_eq(pc->on_warn.kind, REACT_IGNORE);
	ck_assert_int_eq(pc->on_crit.kind, REACT_DOWN);
	ck_assert_ptr_null(config_probe(cfg, "nope"));
	ck_assert_uint_eq(cfg->nservices, 1);
	ck_assert_str_eq(cfg->services[0].name, "web");
	ck_assert_uint_eq(cfg->services[0].nprobes, 2);
	ck_assert_str_eq(cfg->services[0].probes[1], "root");
	ck_assert_uint_eq(cfg->services[0].listen.count, 1);
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

START_TEST(probe_and_service_errors)
{
	expect_error("[probe a]\npath = /\n", 1,
	    "[probe a]: no type (one of: http, docker, disk, inodes, load, "
	    "cpu, memory, swap, file, process, tcp, exec, postgres, "
	    "mountpoint)");
	expect_error("[probe a]\ntype = ping\n", 2,
	    "type: unknown probe type 'ping' (one of: http, docker, disk, "
	    "inodes, load, cpu, memory, swap, file, process, tcp, exec, "
	    "postgres, mountpoint)");
	expect_error("[probe a]\ntype = disk\npath = /\nurl = x\n", 4,
	    "unknown key 'url' in [probe a]");
	expect_error("[probe a]\ntype = disk\npath = /\npath = /tmp\n", 4,
	    "path: given twice (first on line 3)");
	expect_error("[probe a]\ntype = disk\npath = /\ntimeout = 5s\n", 1,
	    "[probe a]: timeout 5s must be below interval 5s");
	expect_error("[probe a]\ntype = disk\npath = /\non_crit = 120%\n", 4,
	    "on_crit: expected down, drain, ignore or a weight from 1% to 99%: "
	    "'120%'");
	expect_error("[probe a]\ntype = disk\npath = /\nfall = 0\n", 4,
	    "fall: '0' out of range (1 to 1000)");
	expect_error("[probe a]\ntype = disk\npath = /\n[probe a]\n"
	    "type = disk\npath = /\n", 4,
	    "[probe a] given twice (first on line 1)");
	expect_error("[probe a b]\n", 1,
	    "[probe NAME]: NAME must be 1 to 64 letters, digits, '_', '-' or '.'");
	expect_error("[probe]\n", 1,
	    "[probe NAME]: NAME must be 1 to 64 letters, digits, '_', '-' or '.'");
	expect_error("[agent x]\n", 1, "[agent] takes no name");
	/* One error for a bad kind value, not a second "required" one. */
	expect_error("[probe a]\ntype = exec\ncommand = 'unbalanced\n", 3,
	    "command: unbalanced single quote: ''unbalanced'");
	expect_error("[service web]\nprobes = nope\n", 2,
	    "probes: no [probe nope] section");
	expect_error("[service web]\nlisten = *:9600\n", 1,
	    "[service web]: no probes (probes = name, name, ...)");
	expect_error("[probe a]\ntype = disk\npath = /\n[service web]\n"
	    "probes = a, a\n", 5, "probes: a probe is named twice: 'a, a'");
	expect_error("[probe a]\ntype = disk\npath = /\n[service web]\n"
	    "probes = a\nbogus = 1\n", 6, "unknown key 'bogus' in [service web]");
}
END_TEST

/* The window keys: their values, their defaults, what they need. */
START_TEST(window_keys)
{
	struct config_errors	 errs;
	struct config		*cfg;
	const struct window_conf *w;
	const char		*http = "[probe a]\ntype = http\n"
	    "url = http://127.0.0.1:1/\ninterval = 1s\ntimeout = 200ms\n";
	char			 text[1024];

	snprintf(text, sizeof(text), "%swindow = 1m\nwarn_p95 = 300ms\n"
	    "crit_p95 = 1s\nwarn_p99 = 800ms\ncrit_p99 = 2s\n"
	    "warn_error_rate = 5%%\ncrit_error_rate = 20%%\n"
	    "min_samples = 30\nsamples_per_run = 5\n", http);
	cfg = load(text, &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	w = &cfg->probes[0].window;
	ck_assert_uint_eq(w->window_ms, 60000);
	ck_assert_uint_eq(w->warn_p95_ms, 300);
	ck_assert_uint_eq(w->crit_p95_ms, 1000);
	ck_assert_uint_eq(w->warn_p99_ms, 800);
	ck_assert_uint_eq(w->crit_p99_ms, 2000);
	ck_assert_uint_eq(w->warn_error_rate, 5);
	ck_assert_uint_eq(w->crit_error_rate, 20);
	ck_assert_uint_eq(w->min_samples, 30);
	ck_assert_uint_eq(w->samples_per_run, 5);
	config_free(cfg);
	config_errors_free(&errs);
	/* Defaults, and a window with no threshold (figures only). */
	snprintf(text, sizeof(text), "%swindow = 30s\n", http);
	cfg = load(text, &errs, NULL);
	ck_assert_ptr_nonnull(cfg);
	w = &cfg->probes[0].window;
	ck_assert_uint_eq(w->min_samples, 10);
	ck_assert_uint_eq(w->samples_per_run, 1);
	ck_assert_uint_eq(w->warn_p99_ms, 0);
	config_free(cfg);
	config_errors_free(&errs);

	expect_error("[probe a]\ntype = disk\npath = /\nwindow = 1m\n", 4,
	    "window: a probe of type disk keeps no window (windows are for "
	    "types http, tcp, postgres)");
	snprintf(text, sizeof(text), "%swarn_p99 = 1s\n", http);
	expect_error(text, 6, "[probe a]: warn_p99 needs window");
	snprintf(text, sizeof(text), "%ssamples_per_run = 2\n", http);
	expect_error(text, 6, "[probe a]: samples_per_run needs window");
	snprintf(text, sizeof(text), "%swindow = 1m\nwarn_p99 = 2s\n"
	    "crit_p99 = 2s\n", http);
	expect_error(text, 7, "[probe a]: warn_p99 2s must be below "
	    "crit_p99 2s");
	snprintf(text, sizeof(text), "%swindow = 1m\nwarn_error_rate = 50%%\n"
	    "crit_error_rate = 10%%\n", http);
	expect_error(text, 7, "[probe a]: warn_error_rate 50% must be below "
	    "crit_error_rate 10%");
	snprintf(text, sizeof(text), "%swindow = 1m\nwarn_error_rate = 0.5%%\n",
	    http);
	expect_error(text, 7, "warn_error_rate: expected a whole percentage "
	    "such as 25%: '0.5%'");
	snprintf(text, sizeof(text), "%swindow = 1m\nsamples_per_run = 10\n",
	    http);
	expect_error(text, 7, "[probe a]: samples_per_run 10 leaves 100ms per "
	    "request: timeout 200ms must be at most that");
	snprintf(text, sizeof(text), "%swindow = 5s\n", http);
	expect_error(text, 6, "[probe a]: window 5s holds about 5 samples at "
	    "interval 1s and samples_per_run 1: fewer than min_samples 10, it "
	    "would never judge");
	snprintf(text, sizeof(text), "%swindow = 24h\ninterval = 100ms\n",
	    "[probe a]\ntype = tcp\naddress = 127.0.0.1:1\ntimeout = 50ms\n");
	expect_error(text, 5, "[probe a]: window 24h at interval 100ms keeps "
	    "up to 200000 samples, more than 100000");
}
END_TEST

START_TEST(shipped_examples_parse)
{
	const char		*root = getenv("SOURCE_ROOT");
	const char		*names[] = { "directum-rx.conf", "systemd-unit.conf" };
	struct config_errors	 errs;
	struct config		*cfg;
	char			 path[1024];
	size_t			 i;

	ck_assert_ptr_nonnull(root);
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/conf/examples/%s", root, names[i]);
		cfg = config_load(path, &errs);
		ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
		config_free(cfg);
		config_errors_free(&errs);
	}
}
END_TEST

START_TEST(long_line)
{
	char	text[600];

	snprintf(text, sizeof(text), "[agent]\nstate_dir = /%0400d\n"
	    "max_connections = 2\n", 0);
	expect_error(text, 2, "line too long (at most 198 characters)");
}
END_TEST

START_TEST(every_error_reported_in_order)
{
	struct config_errors	 errs;
	struct config		*cfg;
	char			*path, want[512];

	cfg = load("[agent]\nbogus = 1\nmax_connections = -1\n[x]\n"
	    "reply_reasons = perhaps\n", &errs, &path);
	ck_assert_ptr_null(cfg);
	ck_assert_uint_eq(errs.count, 3);
	snprintf(want, sizeof(want), "%s:2: unknown key 'bogus' in [agent]", path);
	ck_assert_str_eq(errs.lines[0], want);
	snprintf(want, sizeof(want), "%s:3: max_connections: expected a whole "
	    "number: '-1'", path);
	ck_assert_str_eq(errs.lines[1], want);
	snprintf(want, sizeof(want), "%s:4: unknown section [x] (known: [agent], [probe NAME], [service NAME], [http], [peers], [haproxy])",
	    path);
	ck_assert_str_eq(errs.lines[2], want);
	free(path);
	config_errors_free(&errs);
}
END_TEST

START_TEST(missing_file)
{
	struct config_errors	 errs;
	char			 want[512];

	ck_assert_ptr_null(config_load("/nonexistent/lbagent.conf", &errs));
	ck_assert_uint_eq(errs.count, 1);
	snprintf(want, sizeof(want), "/nonexistent/lbagent.conf: cannot open: "
	    "No such file or directory");
	ck_assert_str_eq(errs.lines[0], want);
	config_errors_free(&errs);
}
END_TEST

START_TEST(transitions_and_mode)
{
	struct config_errors	 errs;
	struct config		*cfg;
	int			 mode;

	cfg = load("[agent]\n"
	    "mode = off\n"
	    "down_after = 5s\n"
	    "up_after = 20s\n"
	    "ramp_start = 40%\n"
	    "flap_limit = 0\n"
	    "[probe a]\ntype = tcp\naddress = 127.0.0.1:1\n"
	    "[service web]\nprobes = a\nup_after = 2m\nramp = 0\n"
	    "[service api]\nprobes = a\n", &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	ck_assert(cfg->automation_off);
	ck_assert(!cfg->shadow);
	ck_assert_uint_eq(cfg->transitions.down_after_ms, 5000);
	ck_assert_uint_eq(cfg->transitions.up_after_ms, 20000);
	ck_assert_uint_eq(cfg->transitions.degrade_after_ms, 10000);
	ck_assert_uint_eq(cfg->transitions.restore_after_ms, 30000);
	ck_assert_uint_eq(cfg->transitions.ramp_ms, 60000);
	ck_assert_uint_eq(cfg->transitions.ramp_start, 40);
	ck_assert_uint_eq(cfg->transitions.flap_limit, 0);
	ck_assert_uint_eq(cfg->transitions.flap_window_ms, 600000);
	/* A service inherits [agent]'s and overrides what it gives. */
	ck_assert_uint_eq(cfg->services[0].transitions.up_after_ms, 120000);
	ck_assert_uint_eq(cfg->services[0].transitions.ramp_ms, 0);
	ck_assert_uint_eq(cfg->services[0].transitions.down_after_ms, 5000);
	ck_assert_uint_eq(cfg->services[0].transitions.ramp_start, 40);
	ck_assert_uint_eq(cfg->services[1].transitions.up_after_ms, 20000);
	config_free(cfg);
	config_errors_free(&errs);

	cfg = load("[agent]\n", &errs, NULL);
	ck_assert_ptr_nonnull(cfg);
	ck_assert(!cfg->automation_off);
	ck_assert_uint_eq(cfg->transitions.down_after_ms, 30000);
	ck_assert_uint_eq(cfg->transitions.up_after_ms, 60000);
	ck_assert_uint_eq(cfg->transitions.ramp_start, 25);
	ck_assert_uint_eq(cfg->transitions.flap_limit, 3);
	config_free(cfg);
	config_errors_free(&errs);

	expect_error("[agent]\nmode = manual\n", 2,
	    "mode: expected auto, off or shadow: 'manual'");
	expect_error("[agent]\nramp_start = 0%\n", 2,
	    "ramp_start: '0%' out of range (1% to 100%)");
	expect_error("[agent]\nramp_start = 25.5%\n", 2,
	    "ramp_start: expected a whole percentage such as 25%: '25.5%'");
	expect_error("[agent]\nflap_limit = 33\n", 2,
	    "flap_limit: '33' out of range (0 to 32)");
	expect_error("[agent]\ndown_after = 1m\n\nup_after = 30s\n", 4,
	    "up_after 30s must be at least down_after 1m");
	expect_error("[agent]\ndown_after = 2m\n", 2,
	    "up_after 1m must be at least down_after 2m");
	expect_error("[agent]\ndown_after = 1s\ndown_after = 2s\n", 3,
	    "down_after: given twice (first on line 2)");
	expect_error("[probe a]\ntype = tcp\naddress = 127.0.0.1:1\n"
	    "[service web]\nprobes = a\ndown_after = 90s\n", 6,
	    "[service web]: up_after 1m must be at least down_after 90s");
	expect_error("[probe a]\ntype = tcp\naddress = 127.0.0.1:1\n"
	    "down_after = 1s\n", 4, "unknown key 'down_after' in [probe a]");

	ck_assert_int_eq(config_parse_mode("OFF", &mode), 0);
	ck_assert_int_eq(mode, SERVICE_MODE_OFF);
	ck_assert_int_eq(config_parse_mode("Auto", &mode), 0);
	ck_assert_int_eq(mode, SERVICE_MODE_AUTO);
	ck_assert_int_eq(config_parse_mode("shadow", &mode), 0);
	ck_assert_int_eq(mode, SERVICE_MODE_SHADOW);
	ck_assert_int_eq(config_parse_mode("on", &mode), -1);
	ck_assert_int_eq(config_parse_mode("", &mode), -1);

	/* mode = shadow sets shadow only; off sets off only. */
	cfg = load("[agent]\nmode = shadow\n", &errs, NULL);
	ck_assert_ptr_nonnull(cfg);
	ck_assert(cfg->shadow);
	ck_assert(!cfg->automation_off);
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

/* The shipped config parses, and documents every key with its default. */
START_TEST(peers_section)
{
	struct config_errors	 errs;
	struct config		*cfg;
	const struct transition_conf *web;

	/* Without [peers]: no guard, the defaults all the same. */
	cfg = load("[agent]\nnode_id = n1\n", &errs, NULL);
	ck_assert_ptr_nonnull(cfg);
	ck_assert(!config_peers_on(cfg));
	ck_assert_uint_eq(cfg->peers.interval_ms, 1000);
	ck_assert_uint_eq(cfg->transitions.peer_timeout_ms, 2000);
	ck_assert_uint_eq(cfg->transitions.alone_grace_ms, 30000);
	ck_assert_uint_eq(cfg->transitions.recheck_after_ms, 1500);
	ck_assert_uint_eq(cfg->transitions.just_out_ms, 10000);
	ck_assert_str_eq(config_server(cfg, &cfg->transitions), "n1");
	config_free(cfg);
	config_errors_free(&errs);

	cfg = load("[agent]\nnode_id = n1\n"
	    "[peers]\n"
	    "agents = http://10.0.0.12:9506, https://u:pw@10.0.0.13:9506/\n"
	    "haproxy = unix:/run/haproxy/admin.sock, tcp:10.0.0.2:9999, "
	    "http://lb1:8404/stats;csv\n"
	    "backend = app\nserver = web1\ntimeout = 500ms\n"
	    "alone_grace = 1m\nrecheck_after = 2.5s\njust_out = 20s\n"
	    "interval = 250ms\n"
	    "[probe p]\ntype = file\npath = /x\n"
	    "[service web]\nprobes = p\nbackend = web_be\nalone_grace = 5s\n"
	    "timeout = 3s\n[probe own]\ntype = file\npath = /y\n", &errs,
	    NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	ck_assert(config_peers_on(cfg));
	ck_assert_uint_eq(cfg->peers.agents.count, 2);
	ck_assert_str_eq(cfg->peers.agents.items[1],
	    "https://u:pw@10.0.0.13:9506/");
	ck_assert_uint_eq(cfg->peers.haproxy.count, 3);
	ck_assert_uint_eq(cfg->peers.interval_ms, 250);
	ck_assert_str_eq(cfg->transitions.backend, "app");
	ck_assert_str_eq(config_server(cfg, &cfg->transitions), "web1");
	ck_assert_uint_eq(cfg->transitions.peer_timeout_ms, 500);
	ck_assert_uint_eq(cfg->transitions.alone_grace_ms, 60000);
	ck_assert_uint_eq(cfg->transitions.recheck_after_ms, 2500);
	ck_assert_uint_eq(cfg->transitions.just_out_ms, 20000);
	/* A service starts from [peers] and overrides what it gives. */
	web = &cfg->services[0].transitions;
	ck_assert_str_eq(web->backend, "web_be");
	ck_assert_str_eq(config_server(cfg, web), "web1");
	ck_assert_uint_eq(web->alone_grace_ms, 5000);
	ck_assert_uint_eq(web->peer_timeout_ms, 3000);
	ck_assert_uint_eq(web->just_out_ms, 20000);
	/* The load balancers used to be [peers] keys: read, and warned. */
	ck_assert_uint_eq(errs.nwarnings, 3);
	ck_assert(strstr(errs.warnings[0], ":5: warning: [peers] haproxy is "
	    "deprecated: write it as sources in [haproxy]") != NULL);
	ck_assert(strstr(errs.warnings[1], ":6: warning: [peers] backend is "
	    "deprecated: write it as backend in [haproxy]") != NULL);
	config_free(cfg);
	config_errors_free(&errs);

	/* [haproxy] of its own: the load balancers with no peers at all. */
	cfg = load("[agent]\nnode_id = n1\n"
	    "[haproxy]\nsources = unix:/run/haproxy/admin.sock, "
	    "http://lb2:8404/stats;csv\nbackend = app\nserver = web1\n"
	    "[probe p]\ntype = file\npath = /x\n"
	    "[service web]\nprobes = p\nbackend = web_be\n"
	    "[probe own]\ntype = file\npath = /y\n", &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	ck_assert_uint_eq(errs.nwarnings, 0);
	ck_assert(config_peers_on(cfg));
	ck_assert_uint_eq(cfg->peers.agents.count, 0);
	ck_assert_uint_eq(cfg->peers.haproxy.count, 2);
	ck_assert_str_eq(cfg->transitions.backend, "app");
	ck_assert_str_eq(config_server(cfg, &cfg->transitions), "web1");
	ck_assert_str_eq(cfg->services[0].transitions.backend, "web_be");
	ck_assert_str_eq(config_server(cfg, &cfg->services[0].transitions),
	    "web1");
	config_free(cfg);
	config_errors_free(&errs);

	/* Liveness: dead after more rounds than suspect. */
	expect_error("[peers]\nagents = http://a:1\nsuspect_after = 5\n"
	    "dead_after = 5\n", 4, "dead_after must be more than "
	    "suspect_after (rounds)");
	expect_error("[peers]\nagents = http://a:1\nsuspect_after = 20\n", 3,
	    "dead_after must be more than suspect_after (rounds)");
	expect_error("[peers]\nagents = http://a:1\nsuspect_after = 0\n", 3,
	    "suspect_after: '0' out of range (1 to 100000)");
	expect_error("[peers]\nagents = ftp://10.0.0.12/\n", 2,
	    "agents: expected http:// or https:// URLs: 'ftp://10.0.0.12/'");
	expect_error("[peers]\nagents = unix:/run/x.sock\n", 2,
	    "agents: expected http:// or https:// URLs: 'unix:/run/x.sock'");
	expect_error("[peers]\nagents = http://a:1, , http://b:1\n", 2,
	    "agents: an empty item in the list: 'http://a:1, , http://b:1'");
	expect_error("[peers]\nagents = http://a:1, http://a:1\n", 2,
	    "agents: http://a:1 given twice (items 1 and 2: the same "
	    "address, credentials aside)");
	expect_error("[peers]\nagents = http://a:1\nhaproxy = unix:/x\n", 3,
	    "the load balancers need backend in [haproxy] (this node's "
	    "backend on them)");
	expect_error("[haproxy]\nsources = unix:/x\n", 2,
	    "the load balancers need backend in [haproxy] (this node's "
	    "backend on them)");
	expect_error("[haproxy]\nsources = unix:/x, unix:/x\nbackend = b\n",
	    2, "sources: unix:/x given twice (items 1 and 2: the same "
	    "address, credentials aside)");
	expect_error("[haproxy]\nsources = unix:/x\nbackend = be\n"
	    "[peers]\nhaproxy = unix:/y\n", 5, "haproxy: given in [haproxy] "
	    "as sources too (line 2); keep that one");
	expect_error("[haproxy]\nsources = unix:/x\nbackend = be\n"
	    "[peers]\nbackend = b2\n", 5, "backend: given in [haproxy] "
	    "as backend too (line 3); keep that one");
	expect_error("[haproxy]\nagents = http://a:1\n", 2,
	    "unknown key 'agents' in [haproxy]");
	expect_error("[peers]\nagents = http://a:1\nrecheck_after = 11s\n", 3,
	    "recheck_after 11s must be at most just_out 10s");
	expect_error("[peers]\nagents = http://a:1\ntimeout = 2m\n", 3,
	    "timeout: '2m' out of range (10ms to 1m)");
	expect_error("[peers]\nagents = http://a:1\nbackend = a b\n", 3,
	    "backend: must be 1 to 64 letters, digits, '_', '-' or '.': "
	    "'a b'");
	expect_error("[peers]\nagents = http://a:1\nrise = 2\n", 3,
	    "unknown key 'rise' in [peers]");
	expect_error("[peers x]\n", 1, "[peers] takes no name");
	/* The guard's keys belong to [peers] or a service, not [agent]. */
	expect_error("[agent]\nalone_grace = 5s\n", 2,
	    "unknown key 'alone_grace' in [agent]");
	expect_error("[peers]\nagents = http://a:1\n[probe p]\ntype = file\n"
	    "path = /x\n[service s]\nprobes = p\nrecheck_after = 1m\n", 8,
	    "[service s]: recheck_after 1m must be at most just_out 10s");
}
END_TEST

/*
 * A line holds 198 characters, seven or eight peer URLs: [peers] agents (and
 * [haproxy] sources) may be given again, each line adding to the list, up to 64; a
 * node twice across lines is still an error, and so is any other key twice.
 */
START_TEST(peer_lists_over_lines)
{
	struct config_errors	 errs;
	struct config		*cfg;
	char			 text[8192], *at = text, *end = text + sizeof(text);
	int			 i;

	at += snprintf(at, end - at, "[peers]\n");
	for (i = 0; i < 50; i++)
		at += snprintf(at, end - at, "%shttp://127.0.0.1:%d%s",
		    i % 7 == 0 ? "agents = " : ", ", 20000 + i,
		    i % 7 == 6 || i == 49 ? "\n" : "");
	snprintf(at, end - at, "[haproxy]\nbackend = be\nsources = unix:/lb1\n"
	    "sources = http://lb2:8404/stats;csv\n");
	cfg = load(text, &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	ck_assert_uint_eq(cfg->peers.agents.count, 50);
	ck_assert_str_eq(cfg->peers.agents.items[0], "http://127.0.0.1:20000");
	ck_assert_str_eq(cfg->peers.agents.items[49], "http://127.0.0.1:20049");
	ck_assert_uint_eq(cfg->peers.haproxy.count, 2);
	ck_assert_str_eq(cfg->peers.haproxy.items[1], "http://lb2:8404/stats;csv");
	config_free(cfg);
	config_errors_free(&errs);

	expect_error("[peers]\nagents = http://a:1, http://b:1\n"
	    "agents = http://a:1\n", 2, "agents: http://a:1 given twice "
	    "(items 1 and 3: the same address, credentials aside)");
	at = text;
	at += snprintf(at, end - at, "[peers]\n");
	for (i = 0; i < 65; i++)
		at += snprintf(at, end - at, "agents = http://127.0.0.1:%d\n",
		    20000 + i);
	expect_error(text, 66, "agents: too many (at most 64): "
	    "'http://127.0.0.1:20064'");
	expect_error("[haproxy]\nsources = unix:/x\nsources = unix:/x\n"
	    "backend = be\n", 2, "sources: unix:/x given twice (items 1 and "
	    "2: the same address, credentials aside)");
	expect_error("[haproxy]\nsources = unix:/x\nbackend = be\n"
	    "backend = be2\n", 4, "backend: given twice (first on line 3)");
}
END_TEST

/*
 * One source twice in [peers], credentials aside: refused, named with its
 * credentials redacted; sources that are only alike are not.
 */
START_TEST(peer_sources_twice)
{
	struct config_errors	 errs;
	struct config		*cfg;

	expect_error("[peers]\nagents = http://n:1\nbackend = be\n"
	    "haproxy = http://a:x@127.0.0.1:8404/stats;csv, "
	    "http://b:y@127.0.0.1:8404/stats;csv\n", 4,
	    "haproxy: http://***@127.0.0.1:8404/stats;csv given twice "
	    "(items 1 and 2: the same address, credentials aside)");
	expect_error("[peers]\nagents = http://n:1\nbackend = be\n"
	    "haproxy = unix:/x, http://lb1/stats;csv, "
	    "http://u:pw@lb1:80/stats;csv\n", 4,
	    "haproxy: http://***@lb1:80/stats;csv given twice "
	    "(items 2 and 3: the same address, credentials aside)");
	expect_error("[peers]\nagents = http://n:1\nbackend = be\n"
	    "haproxy = unix:/x, tcp:10.0.0.2:9999, unix:/x\n", 4,
	    "haproxy: unix:/x given twice (items 1 and 3: the same "
	    "address, credentials aside)");
	expect_error("[peers]\nagents = http://n:1\nbackend = be\n"
	    "haproxy = tcp:10.0.0.2:9999, tcp:10.0.0.2:09999\n", 4,
	    "haproxy: tcp:10.0.0.2:09999 given twice (items 1 and 2: the "
	    "same address, credentials aside)");
	/* An agent is read at its /status: with or without the '/'. */
	expect_error("[peers]\nagents = http://n1:9506, "
	    "https://u:pw@n2:9506, http://n1:9506/\n", 2,
	    "agents: http://n1:9506/ given twice (items 1 and 3: the same "
	    "address, credentials aside)");
	cfg = load("[peers]\nagents = http://n1:9506, "
	    "https://u:pw@n2:9506, http://n1:9506/, "
	    "https://n2:9506/\n", &errs, NULL);
	ck_assert_ptr_null(cfg);
	ck_assert_uint_eq(errs.count, 2);
	ck_assert_msg(strstr(errs.lines[1], "agents: https://n2:9506/ "
	    "given twice (items 2 and 4:") != NULL, "%s", errs.lines[1]);
	config_errors_free(&errs);
	/* Other errors in a list of sources show it redacted too. */
	expect_error("[peers]\nagents = http://n:1, ftp://u:pw@n2/\n", 2,
	    "agents: expected http:// or https:// URLs: "
	    "'http://n:1, ftp://***@n2/'");
	expect_error("[peers]\nagents = http://n:1\nbackend = be\n"
	    "haproxy = http://u:pw@lb1/stats;csv,,unix:x\n", 4,
	    "haproxy: an empty item in the list: "
	    "'http://***@lb1/stats;csv,,unix:x'");
	/* Alike but not the same: other paths, hosts, ports, schemes. */
	cfg = load("[peers]\nagents = http://n1:9506, http://n1:9507, "
	    "https://n1:9506, http://n1:9506/x\nbackend = be\n"
	    "haproxy = http://lb1/stats;csv, http://lb1/other;csv, "
	    "http://lb2/stats;csv, http://lb1:8080/stats;csv, "
	    "unix:/x, unix:/y, tcp:10.0.0.2:1, tcp:10.0.0.3:1\n",
	    &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

/*
 * A service's markers are in state_dir/NAME/: a name that is state_dir
 * itself, its parent, or a file the state directory holds is refused, by
 * the one check lbagentctl uses too.
 */
START_TEST(service_names_the_state_dir_uses)
{
	static const struct {
		const char	*name, *why;
	} bad[] = {
		{ ".", "'.' starts with '.': state_dir/./ would be state_dir "
		  "itself, its parent or a hidden file (lbagentctl's "
		  "temporary markers)" },
		{ "..", NULL },
		{ ".drain.abc123", NULL },
		{ ".web", NULL },
		{ "drain", "'drain' is a marker's name: state_dir/drain is the "
		  "node-wide drain marker" },
		{ "maint", "'maint' is a marker's name: state_dir/maint is the "
		  "node-wide maint marker" },
		{ "off", "'off' is a marker's name: state_dir/off is the "
		  "node-wide off marker" },
		{ "state.json", "'state.json' is the state file's name: "
		  "state_dir/state.json is lbagent's own" },
		{ "state.json.tmp", "'state.json.tmp' is the state file's "
		  "name: state_dir/state.json.tmp is lbagent's own" },
		{ "state.json.corrupt", NULL },
		{ "a/b", "a service name must be 1 to 64 letters, digits, "
		  "'_', '-' or '.'" },
		{ "", NULL },
	};
	static const char *const good[] = { "web", "drainer", "offline",
	    "maint2", "state", "state.jsonl", "a.b", "x.", "_", "-" };
	struct config_errors	 errs;
	struct config		*cfg;
	char			 why[256], *text;
	size_t			 i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		ck_assert_msg(name_service(bad[i].name, why,
		    sizeof(why)) == -1, "'%s' accepted", bad[i].name);
		if (bad[i].why != NULL)
			ck_assert_str_eq(why, bad[i].why);
		else
			ck_assert_msg(why[0] != '\0', "'%s': no why",
			    bad[i].name);
		if (strchr(bad[i].name, '/') != NULL || bad[i].name[0] == '\0')
			continue;
		/* The same from the configuration, at the section's line. */
		ck_assert_int_ne(asprintf(&text, "[probe p]\ntype = file\n"
		    "path = /x\n[service %s]\nprobes = p\n", bad[i].name), -1);
		cfg = load(text, &errs, NULL);
		ck_assert_msg(cfg == NULL, "[service %s] accepted", bad[i].name);
		ck_assert_uint_eq(errs.count, 1);
		ck_assert_ptr_nonnull(strstr(errs.lines[0], ":4: [service "));
		ck_assert_msg(strstr(errs.lines[0], why) != NULL, "%s",
		    errs.lines[0]);
		config_errors_free(&errs);
		free(text);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ck_assert_msg(name_service(good[i], why,
		    sizeof(why)) == 0, "'%s' refused: %s", good[i], why);
		ck_assert_int_ne(asprintf(&text, "[probe p]\ntype = file\n"
		    "path = /x\n[service %s]\nprobes = p\n", good[i]), -1);
		cfg = load(text, &errs, NULL);
		ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
		config_free(cfg);
		config_errors_free(&errs);
		free(text);
	}
	/* A probe is no directory: its names are not limited so. */
	cfg = load("[probe drain]\ntype = file\npath = /x\n[service web]\n"
	    "probes = drain\n", &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

START_TEST(shipped_config_documents_every_key)
{
	const char		*root = getenv("SOURCE_ROOT");
	char			 path[1024], *keys = NULL, *conf = NULL, *line,
				*save, want[256], name[64], def[128];
	size_t			 klen = 0, clen = 0, nkeys = 0;
	struct config_errors	 errs;
	struct config		*cfg;
	FILE			*fp;

	ck_assert_ptr_nonnull(root);
	snprintf(path, sizeof(path), "%s/conf/lbagent.conf", root);
	cfg = config_load(path, &errs);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	config_free(cfg);
	config_errors_free(&errs);

	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	ck_assert_ptr_nonnull(conf = malloc(65536));
	clen = fread(conf, 1, 65535, fp);
	conf[clen] = '\0';
	fclose(fp);

	/*
	 * Every key of every section the --keys reference lists is in the
	 * shipped file, commented, with its default ("none": no value).
	 */
	ck_assert_ptr_nonnull(fp = open_memstream(&keys, &klen));
	config_print_keys(fp);
	fclose(fp);
	for (line = strtok_r(keys, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%63[a-z_] (%*[^,], default %127[^,)]", name,
		    def) != 2 && sscanf(line, "%63[a-z_] (default %127[^,)]",
		    name, def) != 2)
			continue;
		if (strcmp(def, "none") == 0)
			snprintf(want, sizeof(want), "\n;%s = ", name);
		else
			snprintf(want, sizeof(want), "\n;%s = %s\n", name, def);
		ck_assert_msg(strstr(conf, want) != NULL,
		    "conf/lbagent.conf lacks the line '%s'", want + 1);
		nkeys++;
	}
	ck_assert_uint_ge(nkeys, 5);
	free(keys);
	free(conf);
}
END_TEST

/*
 * Errors quote what the file says; its control and non-ASCII bytes come
 * out escaped, so a hostile file cannot put terminal escapes in lbagent
 * -c, lbagentctl check or the log.
 */
START_TEST(error_text_escaped)
{
	expect_error("[agent]\nmode = \x1b[2J\x7f\xc3\xa9\n", 2,
	    "mode: expected auto, off or shadow: '\\x1b[2J\\x7f\\xc3\\xa9'");
	/* What is printable stays as written. */
	expect_error("[agent]\nstate_dir = a\\b\"\n", 2,
	    "state_dir: must be an absolute path: 'a\\b\"'");
}
END_TEST

/*
 * Other nodes read this node's /status: a warning when they are on other
 * hosts and the API listens only on loopback (or a socket).
 */
START_TEST(api_unreachable_by_peers)
{
	static const struct {
		const char	*text;
		bool		 warned;
	} v[] = {
		{ "[peers]\nagents = http://10.0.0.12:9506\n", true },
		{ "[peers]\nagents = http://127.0.0.2:9506, "
		  "http://u:p@lb.example/\n", true },
		{ "[peers]\nagents = https://[fd00::2]:9506\n", true },
		/* A name is not loopback however it starts. */
		{ "[peers]\nagents = http://127.evil.example:9506\n", true },
		{ "[http]\nlisten = unix:/run/lbagent.sock\n"
		  "[peers]\nagents = http://10.0.0.12:9506\n", true },
		{ "[peers]\nagents = http://127.0.0.2:9506, "
		  "http://localhost:9507/, http://u:p@[::1]:9508\n", false },
		{ "[http]\nlisten = 127.0.0.1:9506, 10.0.0.11:9506\n"
		  "[peers]\nagents = http://10.0.0.12:9506\n", false },
		{ "[http]\nlisten = *:9506\n"
		  "[peers]\nagents = http://10.0.0.12:9506\n", false },
		{ "[agent]\n", false },
	};
	struct config_errors	 errs;
	struct config		*cfg;
	const char		*w;
	size_t			 i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		cfg = load(v[i].text, &errs, NULL);
		ck_assert_msg(cfg != NULL, "%s: %s", v[i].text,
		    errs.count ? errs.lines[0] : "");
		w = config_api_unreachable(cfg);
		ck_assert_msg((w != NULL) == v[i].warned, "%s", v[i].text);
		if (w != NULL)
			ck_assert_str_eq(w, "peer-guard: [http] listen has "
			    "no address other nodes can reach, so they cannot "
			    "ask this node whether it serves (they will count "
			    "it as not serving)");
		config_free(cfg);
		config_errors_free(&errs);
	}
}
END_TEST

/*
 * Capacity weights and adaptive maxconn (issue 31): each wrong
 * combination at the line that makes it wrong; a right one loads, its
 * input probe no longer the default service's.
 */
#define CAP_HEAD "[agent]\nno_probes = yes\n[probe p]\ntype = file\n" \
	"path = /x\n[probe cpu]\ntype = cpu\n"
/* A rate: an application's report, after the service. */
#define CAP_Q "[probe q]\ntype = http\nurl = http://127.0.0.1:9/\n" \
	"json_field = qps\n"

START_TEST(capacity_keys)
{
	struct config_errors	 errs;
	struct config		*cfg;

	expect_error(CAP_HEAD "[service web]\nprobes = p\ncapacity_cap = 150%\n",
	    10, "capacity_cap: only with weight_from = capacity (weight_from "
	    "is not set)");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nmaxconn = off\n"
	    "maxconn_max = 10\n", 11, "maxconn_max: only with maxconn = "
	    "adaptive (line 10 says off)");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nweight_from = cpu\n",
	    10, "weight_from: expected health or capacity: 'cpu'");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nweight_from = "
	    "capacity\ncapacity_rate = p\ncapacity_utilization = cpu\n"
	    "capacity_reference = 100\n", 11, "capacity_rate: [probe p] "
	    "(type = file) gives no value that is the rate in req/s");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nweight_from = "
	    "capacity\ncapacity_rate = haproxy\ncapacity_utilization = cpu\n"
	    "capacity_reference = 100\n", 11, "capacity_rate = haproxy: no "
	    "[haproxy] sources to read this server's stats from (sources = "
	    "... in [haproxy]), or name a probe");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nweight_from = "
	    "capacity\ncapacity_rate = q\ncapacity_utilization = cpu\n" CAP_Q,
	    10, "weight_from = capacity: no [peers] agents to compare "
	    "estimates with, and no capacity_reference (the req/s that count "
	    "as 100%)");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nweight_from = "
	    "capacity\ncapacity_rate = q\ncapacity_reference = 5\n" CAP_Q, 10,
	    "weight_from = capacity: no capacity_utilization (a probe whose "
	    "value is the utilization: a cpu probe, an http probe's "
	    "json_field)");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nweight_from = "
	    "capacity\ncapacity_rate = nope\ncapacity_utilization = cpu\n"
	    "capacity_reference = 5\n", 11, "capacity_rate: no [probe nope] "
	    "section (or haproxy)");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nmaxconn = adaptive\n"
	    "maxconn_latency = p\n", 11, "maxconn_latency: [probe p] (type = "
	    "file) gives no value that is the latency in ms");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nmaxconn = adaptive\n"
	    "maxconn_latency = haproxy\n", 11, "maxconn_latency = haproxy: no "
	    "[haproxy] sources to read this server's stats from (sources = "
	    "... in [haproxy]), or name a probe");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nmaxconn = adaptive\n"
	    "maxconn_latency = q\nmaxconn_min = 50\nmaxconn_max = 10\n" CAP_Q,
	    12,
	    "maxconn_min 50 is over maxconn_max 10");
	expect_error(CAP_HEAD "[service web]\nprobes = p\nweight_from = "
	    "capacity\ncapacity_rate = q\ncapacity_utilization = cpu\n"
	    "capacity_reference = 5\ncapacity_cap = 300%\n" CAP_Q, 14,
	    "capacity_cap: '300%' out of range (100% to 256%)");
	expect_error(CAP_HEAD "[service web]\nprobes = p\ncapacity_flor = 10%\n",
	    10, "unknown key 'capacity_flor' in [service web]; did you mean "
	    "'capacity_floor'?");
	cfg = load(CAP_HEAD "[service web]\nprobes = p\nweight_from = capacity\n"
	    "capacity_rate = q\ncapacity_utilization = cpu\n"
	    "capacity_reference = 100\ncapacity_cap = 250%\n"
	    "capacity_half_life = 2s\n" CAP_Q, &errs, NULL);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "");
	ck_assert(cfg->services[0].capacity.on);
	ck_assert(!cfg->services[0].capacity.adaptive);
	ck_assert_uint_eq(cfg->services[0].capacity.cap_pct, 250);
	ck_assert_uint_eq(cfg->services[0].capacity.half_life_ms, 2000);
	ck_assert_uint_eq(cfg->services[0].capacity.floor_pct, 25);
	ck_assert(config_probe_named(cfg, "cpu"));
	ck_assert(config_probe_named(cfg, "q"));
	config_free(cfg);
	config_errors_free(&errs);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("config");
	TCase	*tc = tcase_create("config");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, backend_inherited);
	tcase_add_test(tc, default_without_probes);
	tcase_add_test(tc, every_key_set);
	tcase_add_test(tc, error_paths);
	tcase_add_test(tc, probe_and_service_sections);
	tcase_add_test(tc, probe_and_service_errors);
	tcase_add_test(tc, window_keys);
	tcase_add_test(tc, shipped_examples_parse);
	tcase_add_test(tc, long_line);
	tcase_add_test(tc, every_error_reported_in_order);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, peers_section);
	tcase_add_test(tc, peer_sources_twice);
	tcase_add_test(tc, peer_lists_over_lines);
	tcase_add_test(tc, api_unreachable_by_peers);
	tcase_add_test(tc, service_names_the_state_dir_uses);
	tcase_add_test(tc, shipped_config_documents_every_key);
	tcase_add_test(tc, transitions_and_mode);
	tcase_add_test(tc, error_text_escaped);
	tcase_add_test(tc, capacity_keys);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

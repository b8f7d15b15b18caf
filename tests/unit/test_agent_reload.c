/*
 * A reload over a real agent and a real file probe: a probe with the same
 * settings keeps running with its own, and the reload edits neither
 * configuration, so the old one can be freed whole while the kept probe
 * goes on (under ASan, a run reading freed settings would crash).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbagent/daemon/agent.h"
#include "lbagent/daemon/config.h"
#include "lbagent/daemon/scheduler.h"
#include "testutil.h"

static char	*dir;

static struct config *
load(const char *text)
{
	struct config_errors	 errs;
	struct config		*cfg;
	char			*path;

	memset(&errs, 0, sizeof(errs));
	path = tu_write(dir, "lbagent.conf", text, -1);
	cfg = config_load(path, &errs);
	ck_assert_msg(cfg != NULL, "%s", errs.count ? errs.lines[0] : "?");
	config_errors_free(&errs);
	free(path);
	return cfg;
}

static const struct probe_state *
first_probe(const struct agent *a)
{
	struct agent_service_view	v;

	agent_service_view(a, 0, &v);
	ck_assert_uint_eq(v.nprobes, 1);
	return scheduler_probe_state(v.probes[0]);
}

/* Runs the loop until the probe has run `runs` times; fails after 10 s. */
static void
run_until(struct event_base *base, const struct agent *a, uint64_t runs)
{
	int	i;

	for (i = 0; i < 1000 && first_probe(a)->runs[PROBE_OK] < runs; i++) {
		struct timeval	tick = { 0, 10000 };

		event_base_loopexit(base, &tick);
		event_base_dispatch(base);
	}
	ck_assert_uint_ge(first_probe(a)->runs[PROBE_OK], runs);
}

START_TEST(kept_probe_runs_on_after_the_old_config_is_freed)
{
	struct event_base	*base = event_base_new();
	struct probe_env	 env = { base, NULL, "/proc" };
	struct config		*old, *cfg;
	struct agent		*a;
	const void		*old_k, *new_k;
	char			 text[1024], *ok;
	uint64_t		 runs;

	dir = tu_tmpdir();
	ok = tu_write(dir, "ok", "ok\n", -1);
	snprintf(text, sizeof(text), "[agent]\nstate_dir = %s/state\n"
	    "node_id = t\n[probe f]\ntype = file\npath = %s\n"
	    "interval = 100ms\ntimeout = 50ms\n", dir, ok);
	old = load(text);
	ck_assert_ptr_nonnull(a = agent_new(base, old, &env, -1));
	run_until(base, a, 1);
	old_k = old->probes[0].kconf;
	cfg = load(text);
	new_k = cfg->probes[0].kconf;
	ck_assert_int_eq(agent_reload(a, cfg, old), 0);
	/* Neither configuration was edited: each keeps what it parsed. */
	ck_assert_ptr_eq(old->probes[0].kconf, old_k);
	ck_assert_ptr_eq(cfg->probes[0].kconf, new_k);
	runs = first_probe(a)->runs[PROBE_OK];
	config_free(old);
	/* The same probe, with its state, goes on running. */
	run_until(base, a, runs + 3);
	agent_free(a);
	config_free(cfg);
	event_base_free(base);
	free(ok);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* New settings: a new probe, the old one freed with its settings. */
START_TEST(changed_probe_is_new_and_the_old_one_goes)
{
	struct event_base	*base = event_base_new();
	struct probe_env	 env = { base, NULL, "/proc" };
	struct config		*old, *cfg;
	struct agent		*a;
	const struct probe_state *was;
	char			 text[1024], *ok;

	dir = tu_tmpdir();
	ok = tu_write(dir, "ok", "ok\n", -1);
	snprintf(text, sizeof(text), "[agent]\nstate_dir = %s/state\n"
	    "node_id = t\n[probe f]\ntype = file\npath = %s\n"
	    "interval = 100ms\ntimeout = 50ms\n", dir, ok);
	old = load(text);
	ck_assert_ptr_nonnull(a = agent_new(base, old, &env, -1));
	run_until(base, a, 2);
	was = first_probe(a);
	snprintf(text, sizeof(text), "[agent]\nstate_dir = %s/state\n"
	    "node_id = t\n[probe f]\ntype = file\npath = %s\n"
	    "interval = 200ms\ntimeout = 50ms\n", dir, ok);
	cfg = load(text);
	ck_assert_int_eq(agent_reload(a, cfg, old), 0);
	config_free(old);
	ck_assert_ptr_ne(first_probe(a), was);
	ck_assert_uint_eq(first_probe(a)->runs[PROBE_OK], 0);
	run_until(base, a, 2);
	agent_free(a);
	config_free(cfg);
	event_base_free(base);
	free(ok);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

int
main(void)
{
	Suite	*s = suite_create("agent_reload");
	TCase	*tc = tcase_create("agent_reload");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, kept_probe_runs_on_after_the_old_config_is_freed);
	tcase_add_test(tc, changed_probe_is_new_and_the_old_one_goes);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

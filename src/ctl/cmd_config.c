/*
 * The commands about lbagent's configuration: check (what lbagent -c
 * says of a file) and reload (asked on the socket, else SIGHUP, then the
 * result from the status).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lbagent/daemon/config.h"
#include "cmd.h"

int
cmd_check(struct ctl *c)
{
	struct config_errors	 errs;
	struct config		*cfg;
	bool			 ok;

	/* Exactly what lbagent -c prints, for the same file. */
	cfg = config_load(c->config_path, &errs);
	config_errors_print(stdout, &errs);
	ok = cfg != NULL;
	if (ok)
		printf("configuration OK\n");
	config_errors_free(&errs);
	config_free(cfg);
	return ok ? CTL_EXIT_OK : CTL_EXIT_FAIL;
}

/* Whether pid runs lbagent here: never SIGHUP a stranger (another pid
 * namespace, a stale document). */
static bool
is_lbagent(long pid)
{
	char	path[64], comm[64];
	FILE	*fp;
	bool	 ok = false;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if ((fp = fopen(path, "r")) == NULL)
		return false;
	if (fgets(comm, sizeof(comm), fp) != NULL)
		ok = strncmp(comm, "lbagent", 7) == 0 && strncmp(comm,
		    "lbagentctl", 10) != 0;
	fclose(fp);
	return ok;
}

/*
 * Asks for the reload on c->addr, a unix socket: whoever may use it may
 * reload, even when not allowed to signal lbagent. 1 when lbagent took
 * it, 0 when it has no POST /reload (an older version: signal it), -1
 * when not (reported).
 */
static int
ask_reload(struct ctl *c)
{
	char			 err[ERR_MAX], *body = NULL, m[ERR_MAX];
	const json_t		*msg;
	json_t			*doc;
	long			 status;
	enum ctl_http_result	 r;

	r = ctl_http_post(c->addr, NULL, "/reload", &status, &body, err,
	    sizeof(err));
	if (r != CTL_HTTP_OK) {
		cmd_report_unreachable(c, r, err);
		return -1;
	}
	doc = json_loads(body, 0, NULL);
	free(body);
	if (status != 202 && status != 404 && status != 405) {
		msg = json_object_get(doc, "error");
		cmd_errx("%s answered POST /reload with HTTP %ld%s%s",
		    c->addr->text, status, json_is_string(msg) ? ": " : "",
		    cmd_safe(m, sizeof(m), json_string_value(msg)));
	}
	json_decref(doc);
	return status == 202 ? 1 : status == 404 || status == 405 ? 0 : -1;
}

int
cmd_reload(struct ctl *c)
{
	json_t		*root;
	const json_t	*lr, *e;
	double		 deadline, before, after, pid;
	size_t		 i;
	int		 rc = CTL_EXIT_FAIL, asked = 0;
	char		 how[ERR_MAX];

	if (cmd_load_config(c, c->o->address != NULL ? CMD_OPTIONAL :
	    CMD_NEED_QUIET) == -1 || cmd_setup_addresses(c) == -1 || (root =
	    cmd_status_once(c)) == NULL)
		return CTL_EXIT_FAIL;
	if (!cmd_has_detail(root) || !json_is_number(json_object_get(root,
	    "reloads")) || !json_is_number(json_object_get(root, "pid"))) {
		cmd_errx("reload needs lbagent's detailed status (its pid): "
		    "use its unix socket, or set [http] token_file");
		goto out;
	}
	before = json_number_value(json_object_get(root, "reloads"));
	pid = json_number_value(json_object_get(root, "pid"));
	snprintf(how, sizeof(how), "sent SIGHUP to lbagent (pid %.0f)", pid);
	if (c->addr->unix_path[0] != '\0' && (asked = ask_reload(c)) == -1)
		goto out;
	if (asked)
		snprintf(how, sizeof(how), "asked lbagent on %s to reload",
		    c->addr->text);
	else if (pid < 2 || pid > 1 << 30 || !is_lbagent((long)pid)) {
		cmd_errx("pid %.0f from lbagent's status is not an lbagent "
		    "process here (another pid namespace?): not signalling it",
		    pid);
		goto out;
	} else if (kill((pid_t)pid, SIGHUP) == -1) {
		cmd_errx("cannot signal lbagent (pid %.0f): %s", pid,
		    strerror(errno));
		goto out;
	}
	deadline = cmd_now_s() + c->o->timeout_s;
	for (;;) {
		char			err[ERR_MAX];
		enum ctl_http_result	r;

		cmd_sleep_ms(CTL_POLL_MS);
		json_decref(root);
		r = cmd_get_status(c, &root, err, sizeof(err));
		if (r == CTL_HTTP_OK && root != NULL &&
		    (after = json_number_value(json_object_get(root,
		    "reloads"))) > before)
			break;
		if (cmd_now_s() >= deadline) {
			cmd_errx("%s, but it did not report a reload within "
			    "%gs%s%s", how, c->o->timeout_s,
			    root == NULL ? ": " : "", root == NULL ? err :
			    " (its log says why; a version without reload only "
			    "logs the signal)");
			goto out;
		}
	}
	lr = json_object_get(root, "last_reload");
	if (json_is_object(lr) && json_is_true(json_object_get(lr, "ok"))) {
		printf("reloaded %s\n", cmd_safe(how, sizeof(how),
		    json_string_value(json_object_get(root, "config"))));
		rc = CTL_EXIT_OK;
		goto out;
	}
	json_array_foreach(json_object_get(lr, "errors"), i, e)
		printf("%s\n", json_string_value(e) != NULL ?
		    cmd_safe(how, sizeof(how), json_string_value(e)) : "?");
	cmd_errx("reload failed: lbagent keeps running its previous "
	    "configuration");
out:
	json_decref(root);
	return rc;
}

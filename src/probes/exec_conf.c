/*
 * The exec kind's settings: the command split as a shell would (but run
 * without one), its program found at load in EXEC_PATH, and the user's
 * ids and groups looked up then, since the child cannot use NSS.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "lbagent/core/argv.h"
#include "lbagent/probes/probe.h"
#include "exec_kind.h"

const struct probe_key_doc exec_keys[] = {
	{ "command", NULL, "The program and its arguments (required), quoted "
	    "as in a shell but run without one; a bare name is looked up in "
	    EXEC_PATH ".", false },
	{ "user", NULL, "Run as this user (lbagent must run as root).",
	    false },
	{ NULL, NULL, NULL, false },
};

void *
exec_conf_new(void)
{
	return calloc(1, sizeof(struct exec_conf));
}

void
exec_conf_free(void *p)
{
	struct exec_conf	*conf = p;

	if (conf == NULL)
		return;
	argv_free(conf->argv);
	free(conf->path);
	free(conf->user);
	free(conf->groups);
	free(conf);
}

int
exec_conf_set(void *p, const char *key, const char *value, const char **why)
{
	struct exec_conf	*conf = p;
	char			**argv;

	if (strcmp(key, "command") == 0) {
		if (argv_split(value, &argv, why) == -1)
			return -1;
		argv_free(conf->argv);
		conf->argv = argv;
		return 0;
	}
	if (strcmp(key, "user") == 0) {
		if (*value == '\0') {
			*why = "expected a user name";
			return -1;
		}
		free(conf->user);
		if ((conf->user = strdup(value)) == NULL) {
			*why = "out of memory";
			return -1;
		}
		return 0;
	}
	*why = "unknown key";
	return -1;
}

/* The absolute path of a program named without a slash, from EXEC_PATH. */
static char *
find_program(const char *name)
{
	const char	*dir = EXEC_PATH, *end;
	char		 path[PATH_MAX];
	struct stat	 st;
	int		 n;

	for (; *dir != '\0'; dir = *end == ':' ? end + 1 : end) {
		end = strchrnul(dir, ':');
		n = snprintf(path, sizeof(path), "%.*s/%s", (int)(end - dir),
		    dir, name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(path, X_OK) == 0)
			return strdup(path);
	}
	return NULL;
}

/* The user's ids and groups, looked up once: the child cannot use NSS. */
static int
resolve_user(struct exec_conf *conf, const char **why)
{
	struct passwd	*pw;
	gid_t		*groups = NULL, *g;
	int		 n = 16, want;

	errno = 0;
	if ((pw = getpwnam(conf->user)) == NULL) {
		snprintf(conf->why, sizeof(conf->why), "unknown user %s%s%s",
		    conf->user, errno != 0 ? ": " : "",
		    errno != 0 ? strerror(errno) : "");
		*why = conf->why;
		return -1;
	}
	conf->uid = pw->pw_uid;
	conf->gid = pw->pw_gid;
	for (;;) {
		if ((g = realloc(groups, (size_t)n * sizeof(*g))) == NULL)
			goto nomem;
		groups = g;
		want = n;
		if (getgrouplist(conf->user, conf->gid, groups, &want) != -1) {
			n = want;
			break;
		}
		if (want <= n || want > 65536)
			n *= 2;
		else
			n = want;
		if (n > 65536) {
			*why = "the user is in too many groups";
			free(groups);
			return -1;
		}
	}
	free(conf->groups);
	conf->groups = groups;
	conf->ngroups = n;
	return 0;

nomem:
	free(groups);
	*why = "out of memory";
	return -1;
}

int
exec_conf_check(void *p, const char **why)
{
	struct exec_conf	*conf = p;
	const char		*prog;

	if (conf->argv == NULL) {
		*why = "command is required";
		return -1;
	}
	prog = conf->argv[0];
	free(conf->path);
	conf->path = NULL;
	if (*prog == '\0') {
		*why = "the program's name is empty";
		return -1;
	}
	if (prog[0] == '/')
		conf->path = strdup(prog);
	else if (strchr(prog, '/') != NULL) {
		snprintf(conf->why, sizeof(conf->why), "%s: give the program "
		    "as an absolute path, or as a bare name found in the PATH",
		    prog);
		*why = conf->why;
		return -1;
	} else if ((conf->path = find_program(prog)) == NULL) {
		snprintf(conf->why, sizeof(conf->why), "%s not found in "
		    EXEC_PATH " (give an absolute path)", prog);
		*why = conf->why;
		return -1;
	}
	if (conf->path == NULL) {
		*why = "out of memory";
		return -1;
	}
	if (conf->user != NULL && resolve_user(conf, why) == -1)
		return -1;
	return 0;
}

/*
 * The docker kind: asks the Docker Engine API about one container over
 * the daemon's unix socket (GET /containers/NAME/json) on the shared curl
 * loop, and reads State from the answer. The path carries no API version:
 * the daemon then answers with its own, and the fields read here
 * (State.Status, Running, Paused, Restarting, Dead, ExitCode, OOMKilled,
 * Health.Status) are the same in every version since 1.24, while a pinned
 * version is refused by daemons older than it and, in time, by newer ones
 * that drop it.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lbagent/probes/kinds.h"
#include "curl_probe.h"
#include "json_body.h"

#define DOCKER_NAME_MAX		128
#define DOCKER_SOCKET_DEFAULT	"/var/run/docker.sock"

struct docker_conf {
	char	container[DOCKER_NAME_MAX + 1];
	char	socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char	url[DOCKER_NAME_MAX + 64];
};

static const struct probe_key_doc docker_keys[] = {
	{ .name = "container", .help = "the container's name or id" },
	{ .name = "socket", .def = DOCKER_SOCKET_DEFAULT,
	    .help = "the Docker daemon's unix socket" },
	{ .name = NULL },
};

static void *
docker_conf_new(void)
{
	struct docker_conf	*c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	strcpy(c->socket, DOCKER_SOCKET_DEFAULT);
	return c;
}

static void
docker_conf_free(void *conf)
{
	free(conf);
}

static int
docker_conf_set(void *conf, const char *key, const char *value,
    const char **why)
{
	static const char	 name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "abcdefghijklmnopqrstuvwxyz0123456789_.-";
	struct docker_conf	*c = conf;
	size_t			 len = strlen(value);

	if (strcmp(key, "container") == 0) {
		/* Docker's own rule; it also keeps the URL path plain. */
		if (len == 0 || len > DOCKER_NAME_MAX ||
		    strspn(value, name_chars) != len ||
		    strchr(".-_", value[0]) != NULL) {
			*why = "expected a container name or id: letters, "
			    "digits, '_', '.' and '-', starting with a letter "
			    "or digit";
			return -1;
		}
		memcpy(c->container, value, len + 1);
		snprintf(c->url, sizeof(c->url),
		    "http://localhost/containers/%s/json", c->container);
		return 0;
	}
	if (strcmp(key, "socket") == 0) {
		if (value[0] != '/' || len >= sizeof(c->socket)) {
			*why = "expected an absolute path of at most 107 bytes";
			return -1;
		}
		memcpy(c->socket, value, len + 1);
		return 0;
	}
	*why = "unknown key";
	return -1;
}

static int
docker_conf_check(void *conf, const char **why)
{
	struct docker_conf	*c = conf;

	if (c->container[0] == '\0') {
		*why = "container is required";
		return -1;
	}
	return 0;
}

static bool
flag(json_t *state, const char *key)
{
	return json_is_true(json_object_get(state, key));
}

/* What the inspect answer's State says, as the run's result. */
static enum probe_result
docker_state(const struct docker_conf *c, json_t *root, char *reason,
    size_t size)
{
	json_t		*state = json_object_get(root, "State"), *health;
	const char	*status, *hs;
	const char	*name = c->container;

	if (!json_is_object(state)) {
		snprintf(reason, size, "docker API: no State in the answer");
		return PROBE_CRIT;
	}
	status = json_string_value(json_object_get(state, "Status"));
	if (status == NULL)
		status = "";
	health = json_object_get(state, "Health");
	hs = json_string_value(json_object_get(health, "Status"));
	if (flag(state, "Restarting") || strcmp(status, "restarting") == 0)
		snprintf(reason, size, "container %s: restarting", name);
	else if (flag(state, "Paused") || strcmp(status, "paused") == 0)
		snprintf(reason, size, "container %s: paused", name);
	else if (flag(state, "Dead") || strcmp(status, "dead") == 0)
		snprintf(reason, size, "container %s: dead", name);
	else if (flag(state, "Running")) {
		if (hs == NULL || strcmp(hs, "none") == 0) {
			snprintf(reason, size, "container %s: running", name);
			return PROBE_OK;
		}
		if (strcmp(hs, "healthy") == 0) {
			snprintf(reason, size, "container %s: running, healthy",
			    name);
			return PROBE_OK;
		}
		if (strcmp(hs, "starting") == 0) {
			/* Up, but its health check has not passed yet. */
			snprintf(reason, size, "container %s: health starting",
			    name);
			return PROBE_WARN;
		}
		snprintf(reason, size, "container %s: %.20s", name, hs);
	} else if (strcmp(status, "exited") == 0)
		snprintf(reason, size, "container %s: exited (code %lld%s)",
		    name, (long long)json_integer_value(json_object_get(state,
		    "ExitCode")), flag(state, "OOMKilled") ? ", OOM killed" : "");
	else if (strcmp(status, "created") == 0)
		snprintf(reason, size, "container %s: created, never started",
		    name);
	else if (status[0] != '\0')
		snprintf(reason, size, "container %s: %.20s", name, status);
	else
		snprintf(reason, size, "container %s: not running", name);
	return PROBE_CRIT;
}

/*
 * The transfer's result up to the answer's JSON. True when that is still
 * to read (on a worker: docker_json_start).
 */
static bool
docker_judge(const struct docker_conf *c, struct curl_probe *cp,
    CURLcode rc, enum probe_result *r, char *reason, size_t size)
{
	long			 status = 0;
	const char		*why;

	*r = PROBE_CRIT;
	if (rc != CURLE_OK && (why = curl_probe_local(cp, rc)) != NULL) {
		snprintf(reason, size, "%s", why);
		*r = PROBE_UNKNOWN;
		return false;
	}
	if (rc != CURLE_OK) {
		why = curl_probe_error(cp, rc);
		if (rc == CURLE_COULDNT_CONNECT) {
			/* No socket, nobody on it, or not ours to use. */
			snprintf(reason, size, "docker daemon unreachable%s",
			    strcmp(why, "permission denied") == 0 ?
			    ": permission denied" : "");
		} else
			snprintf(reason, size, "docker daemon: %s", why);
		return false;
	}
	curl_probe_answered(cp);
	curl_easy_getinfo(cp->easy, CURLINFO_RESPONSE_CODE, &status);
	if (status == 404) {
		snprintf(reason, size, "container %s: not found", c->container);
		return false;
	}
	if (status != 200) {
		snprintf(reason, size, "docker API: HTTP %ld", status);
		return false;
	}
	return true;
}

/* The answer read after the transfer, on a worker thread. */
struct docker_job {
	struct curl_probe	*cp;	/* the loop's; never read by the thread */
	struct docker_conf	 conf;	/* a copy: a reload may free the probe's */
	char			*body;	/* taken from cp */
	size_t			 len;
	enum probe_result	 r;
	char			 reason[PROBE_REASON_MAX + 1];
};

static void
docker_job_free(void *arg)
{
	struct docker_job	*j = arg;

	free(j->body);
	free(j);
}

static void
docker_work(void *arg)
{
	struct docker_job	*j = arg;
	enum json_body_status	 st;
	json_t			*root;

	j->r = PROBE_CRIT;
	if ((root = json_body_parse(j->body, j->len, 0, &st)) == NULL) {
		snprintf(j->reason, sizeof(j->reason), "docker API: %s",
		    st == JSON_BODY_TOO_BIG ? "answer would take over "
		    JSON_BODY_MEM_TEXT " to parse" : "answer is not JSON");
		return;
	}
	j->r = docker_state(&j->conf, root, j->reason, sizeof(j->reason));
	json_decref(root);
}

static void
docker_work_done(void *arg)
{
	struct docker_job	*j = arg;
	struct curl_probe	*cp = j->cp;
	struct probe_run	*run = cp->run;
	enum probe_result	 r = j->r;
	char			 reason[PROBE_REASON_MAX + 1];

	memcpy(reason, j->reason, sizeof(reason));
	run->data = NULL;
	curl_probe_free(cp);	/* frees j */
	probe_report(run, r, NAN, "%s", reason);
}

/* 0: the answer is read on a worker; -1 with *r and reason: report now. */
static int
docker_json_start(struct curl_probe *cp, enum probe_result *r, char *reason,
    size_t size)
{
	struct docker_job	*j;
	int			 err;

	if ((j = calloc(1, sizeof(*j))) == NULL) {
		snprintf(reason, size, "%s", probe_errno_local(ENOMEM));
		*r = PROBE_UNKNOWN;
		return -1;
	}
	j->cp = cp;
	j->conf = *(const struct docker_conf *)cp->run->conf;
	j->body = cp->body;
	j->len = cp->len;
	cp->body = NULL;
	cp->len = cp->cap = 0;
	if (curl_probe_offload(cp, docker_work, docker_work_done,
	    docker_job_free, j) == 0)
		return 0;
	err = errno;
	docker_job_free(j);
	curl_probe_thread_failed(err, reason, size, r);
	return -1;
}

static void
docker_done(CURL *easy, CURLcode rc, void *arg)
{
	struct curl_probe	*cp = arg;
	struct probe_run	*run = cp->run;
	char			 reason[PROBE_REASON_MAX + 1];
	enum probe_result	 r;

	if (docker_judge(run->conf, cp, rc, &r, reason, sizeof(reason)) &&
	    docker_json_start(cp, &r, reason, sizeof(reason)) == 0)
		return;
	run->data = NULL;
	curl_probe_free(cp);
	probe_report(run, r, NAN, "%s", reason);
}

static void
docker_start(struct probe_run *run)
{
	const struct docker_conf	*c = run->conf;
	struct curl_probe		*cp;

	if ((cp = curl_probe_new(run, c->url, true)) == NULL) {
		probe_report(run, PROBE_UNKNOWN, NAN, "%s",
		    probe_errno_local(ENOMEM));
		return;
	}
	curl_easy_setopt(cp->easy, CURLOPT_UNIX_SOCKET_PATH, c->socket);
	if (curl_probe_start(cp, docker_done) == -1) {
		curl_probe_free(cp);
		probe_report(run, PROBE_CRIT, NAN, "cannot start the request");
	}
}

const struct probe_ops probe_docker_ops = {
	.name = "docker",
	.unit = "",
	.keys = docker_keys,
	.conf_new = docker_conf_new,
	.conf_free = docker_conf_free,
	.conf_set = docker_conf_set,
	.conf_check = docker_conf_check,
	.start = docker_start,
	.cancel = curl_probe_cancel,
	.keep_free = curl_probe_keep_free,
};

/*
 * The docker kind against a fake Docker Engine API: the test HTTP server
 * on a unix socket in a temporary directory, serving inspect answers
 * shaped like Docker's own (tests/unit/data/docker/), and against no
 * daemon at all.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <event2/event.h>

#include "lbagent/probes/kinds.h"
#include "testhttpd.h"
#include "probeutil.h"
#include "testutil.h"

#define DOCKER_HEADERS	"Api-Version: 1.43\r\n"				\
			"Content-Type: application/json\r\n"		\
			"Docker-Experimental: false\r\n"		\
			"Ostype: linux\r\n"				\
			"Server: Docker/24.0.7 (linux)\r\n"

/* Container name, the recorded answer it gets. */
static const char *const recorded[] = {
	"running", "healthy", "starting", "unhealthy", "exited-137",
	"exited-oom", "exited-0", "restarting", "paused", "dead", "created",
};
#define NRECORDED	(sizeof(recorded) / sizeof(recorded[0]))

static struct th_route	routes[NRECORDED + 8];

struct fixture {
	struct event_base	*base;
	struct probe_env	 env;
	struct th_server	*srv;
	char			*dir;
	char			*sock;
	char			*bodies[NRECORDED];
	char			*paths[NRECORDED];
};

static struct fixture	f;

static char *
slurp(const char *name)
{
	const char	*root = getenv("SOURCE_ROOT");
	char		*path, *buf;
	FILE		*fp;
	long		 len;

	ck_assert_ptr_nonnull(root);
	ck_assert_int_ne(asprintf(&path, "%s/tests/unit/data/docker/%s.json",
	    root, name), -1);
	ck_assert_ptr_nonnull(fp = fopen(path, "r"));
	ck_assert_int_eq(fseek(fp, 0, SEEK_END), 0);
	ck_assert_int_gt(len = ftell(fp), 0);
	rewind(fp);
	ck_assert_ptr_nonnull(buf = malloc((size_t)len + 1));
	ck_assert_uint_eq(fread(buf, 1, (size_t)len, fp), (size_t)len);
	buf[len] = '\0';
	fclose(fp);
	free(path);
	return buf;
}

static void
setup(void)
{
	size_t	i, n = 0;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < NRECORDED; i++) {
		f.bodies[i] = slurp(recorded[i]);
		ck_assert_int_ne(asprintf(&f.paths[i], "/containers/%s/json",
		    recorded[i]), -1);
		routes[n++] = (struct th_route){ .path = f.paths[i],
		    .status = 200, .body = f.bodies[i],
		    .headers = DOCKER_HEADERS };
	}
	routes[n++] = (struct th_route){ .path = "/containers/slow/json",
	    .mode = TH_SILENT };
	routes[n++] = (struct th_route){ .path = "/containers/broken/json",
	    .status = 200, .body = "{\"State\": {\"Status\": ", .headers =
	    DOCKER_HEADERS };
	routes[n++] = (struct th_route){ .path = "/containers/nostate/json",
	    .status = 200, .body = "{\"Id\":\"4f7a\"}\n", .headers =
	    DOCKER_HEADERS };
	routes[n++] = (struct th_route){ .path = "/containers/oops/json",
	    .status = 500, .body = "{\"message\":\"something broke\"}\n",
	    .headers = DOCKER_HEADERS };
	/* Anything else: Docker's answer for a container it does not know. */
	routes[n++] = (struct th_route){ .path = "*", .status = 404,
	    .body = "{\"message\":\"No such container: web\"}\n",
	    .headers = DOCKER_HEADERS };
	routes[n] = (struct th_route){ .path = NULL };

	ck_assert_ptr_nonnull(f.base = event_base_new());
	pu_env_init(&f.env, f.base);
	f.dir = tu_tmpdir();
	ck_assert_int_ne(asprintf(&f.sock, "%s/docker.sock", f.dir), -1);
	f.srv = th_start_unix(routes, f.sock);
}

static void
teardown(void)
{
	size_t	i;

	pu_env_free(&f.env);
	th_stop(f.srv);
	event_base_free(f.base);
	tu_rmtree(f.dir);
	free(f.dir);
	free(f.sock);
	for (i = 0; i < NRECORDED; i++) {
		free(f.bodies[i]);
		free(f.paths[i]);
	}
}

#define KV(...)	((const char *const[]){ __VA_ARGS__, NULL })

/* One run against socket; checks result and reason. */
static void
run_one(const char *container, const char *sock, int64_t timeout_ms,
    enum probe_result want, const char *reason)
{
	struct pu	 r;
	void			*conf;

	conf = pu_conf(&probe_docker_ops, KV("container", container, "socket",
	    sock));
	pu_init_env(&r, &probe_docker_ops, &f.env, conf, timeout_ms);
	pu_run(&r, 20000);
	ck_assert_msg(r.out.result == want && strcmp(r.out.reason, reason) == 0,
	    "%s: %s \"%s\", want %s \"%s\"", container,
	    probe_result_name(r.out.result), r.out.reason,
	    probe_result_name(want), reason);
	ck_assert(isnan(r.out.value));
	pu_done(&r);
	probe_docker_ops.conf_free(conf);
}

/* ---- configuration */

START_TEST(config_errors)
{
	static const char	 name_why[] = "expected a container name or id: "
	    "letters, digits, '_', '.' and '-', starting with a letter or "
	    "digit";
	static const char	 sock_why[] = "expected an absolute path of at "
	    "most 107 bytes";
	char			 longname[130], longsock[120];
	const struct {
		const char	*kv[6];
		const char	*why;
	} cases[] = {
		{ { NULL }, "container is required" },
		{ { "socket", "/run/docker.sock" }, "container is required" },
		{ { "container", "" }, name_why },
		{ { "container", "../x" }, name_why },
		{ { "container", "a/b" }, name_why },
		{ { "container", "-x" }, name_why },
		{ { "container", ".x" }, name_why },
		{ { "container", "_x" }, name_why },
		{ { "container", "web app" }, name_why },
		{ { "container", "web%2F" }, name_why },
		{ { "container", "web?x=1" }, name_why },
		{ { "container", "web#" }, name_why },
		{ { "container", "/web" }, name_why },
		{ { "container", longname }, name_why },
		{ { "container", "web", "socket", "" }, sock_why },
		{ { "container", "web", "socket", "docker.sock" }, sock_why },
		{ { "container", "web", "socket", longsock }, sock_why },
		{ { "container", "web", "image", "nginx" }, "unknown key" },
	};
	const char	*why;
	size_t		 i;

	memset(longname, 'a', 129);
	longname[129] = '\0';
	longsock[0] = '/';
	memset(longsock + 1, 's', 107);
	longsock[108] = '\0';
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why = pu_conf_error(&probe_docker_ops, cases[i].kv);
		ck_assert_msg(why != NULL, "case %zu accepted", i);
		ck_assert_msg(strcmp(why, cases[i].why) == 0,
		    "case %zu: \"%s\", want \"%s\"", i, why, cases[i].why);
	}
}
END_TEST

START_TEST(config_accepted)
{
	static const char *const ok[][6] = {
		{ "container", "web" },
		{ "container", "web-1.blue_2" },
		{ "container", "4f7a1c9e2b3d" },
		{ "container", "4f7a1c9e2b3d5a6f8e0c1b2a3d4e5f60718293a4b5c6d7e8"
		    "f9a0b1c2d3e4f506" },
		{ "container", "web", "socket", "/run/user/1000/docker.sock" },
	};
	const struct probe_key_doc	*k = probe_docker_ops.keys;
	size_t				 i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		probe_docker_ops.conf_free(pu_conf(&probe_docker_ops, ok[i]));
	ck_assert_str_eq(probe_docker_ops.name, "docker");
	ck_assert_str_eq(k[0].name, "container");
	ck_assert_ptr_null(k[0].def);
	ck_assert_str_eq(k[1].name, "socket");
	ck_assert_str_eq(k[1].def, "/var/run/docker.sock");
	ck_assert_ptr_null(k[2].name);
}
END_TEST

/* ---- the recorded answers */

START_TEST(states)
{
	static const struct {
		const char		*name;
		enum probe_result	 result;
		const char		*reason;
	} cases[] = {
		{ "running", PROBE_OK, "container running: running" },
		{ "healthy", PROBE_OK, "container healthy: running, healthy" },
		{ "starting", PROBE_WARN,
		    "container starting: health starting" },
		{ "unhealthy", PROBE_CRIT, "container unhealthy: unhealthy" },
		{ "exited-137", PROBE_CRIT,
		    "container exited-137: exited (code 137)" },
		{ "exited-oom", PROBE_CRIT,
		    "container exited-oom: exited (code 137, OOM killed)" },
		{ "exited-0", PROBE_CRIT, "container exited-0: exited (code 0)" },
		{ "restarting", PROBE_CRIT, "container restarting: restarting" },
		{ "paused", PROBE_CRIT, "container paused: paused" },
		{ "dead", PROBE_CRIT, "container dead: dead" },
		{ "created", PROBE_CRIT,
		    "container created: created, never started" },
		{ "web", PROBE_CRIT, "container web: not found" },
		{ "oops", PROBE_CRIT, "docker API: HTTP 500" },
		{ "broken", PROBE_CRIT, "docker API: answer is not JSON" },
		{ "nostate", PROBE_CRIT, "docker API: no State in the answer" },
	};
	size_t	i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_one(cases[i].name, f.sock, 5000, cases[i].result,
		    cases[i].reason);
}
END_TEST

START_TEST(request_shape)
{
	char	*req;

	run_one("4f7a1c9e2b3d", f.sock, 5000, PROBE_CRIT,
	    "container 4f7a1c9e2b3d: not found");
	req = th_last_request(f.srv);
	/* Unversioned: the daemon answers in its own API version. */
	ck_assert_msg(strncmp(req, "GET /containers/4f7a1c9e2b3d/json "
	    "HTTP/1.1\r\n", 43) == 0, "%s", req);
	ck_assert_ptr_nonnull(strstr(req, "\r\nHost: localhost\r\n"));
	free(req);
}
END_TEST

/* ---- no daemon */

START_TEST(unreachable)
{
	char	*path;
	int	 fd;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	/* No socket at all. */
	ck_assert_int_ne(asprintf(&path, "%s/none.sock", f.dir), -1);
	run_one("web", path, 5000, PROBE_CRIT, "docker daemon unreachable");
	free(path);

	/* A socket left behind by a daemon that is gone. */
	ck_assert_int_ne(asprintf(&path, "%s/stale.sock", f.dir), -1);
	strcpy(sun.sun_path, path);
	ck_assert_int_ne(fd = socket(AF_UNIX, SOCK_STREAM, 0), -1);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	close(fd);
	run_one("web", path, 5000, PROBE_CRIT, "docker daemon unreachable");
	free(path);

	/* Not a socket. */
	path = tu_write(f.dir, "file.sock", "", 0);
	run_one("web", path, 5000, PROBE_CRIT, "docker daemon unreachable");
	free(path);

	/* A daemon that accepts and never answers. */
	run_one("slow", f.sock, 300, PROBE_CRIT, "docker daemon: timed out");
}
END_TEST

/* lbagent without a descriptor for the socket: unknown, not unreachable. */
START_TEST(out_of_descriptors)
{
	struct tu_fds	fds;

	tu_fds_exhaust(&fds, 0);
	run_one("running", f.sock, 5000, PROBE_UNKNOWN, "socket: Too many "
	    "open files (lbagent out of descriptors)");
	tu_fds_release(&fds);
	run_one("running", f.sock, 5000, PROBE_OK,
	    "container running: running");
}
END_TEST

START_TEST(cancel_in_flight)
{
	struct pu	 r;
	void			*conf;
	unsigned		 i;

	conf = pu_conf(&probe_docker_ops, KV("container", "slow", "socket",
	    f.sock));
	pu_init_env(&r, &probe_docker_ops, &f.env, conf, 10000);
	pu_start(&r);
	for (i = 0; i < 100 && th_requests(f.srv) == 0; i++)
		pu_loop_pending(f.base, NULL, 50);
	ck_assert_uint_eq(th_requests(f.srv), 1);
	r.run.ops->cancel(&r.run);
	r.run.in_flight = false;
	ck_assert_ptr_null(r.run.data);
	pu_loop_pending(f.base, NULL, 300);
	ck_assert_uint_eq(r.nreports, 0);
	pu_done(&r);
	probe_docker_ops.conf_free(conf);
}
END_TEST

static Suite *
docker_suite(void)
{
	Suite	*s = suite_create("probe_docker");
	TCase	*tc = tcase_create("conf");

	tcase_add_test(tc, config_errors);
	tcase_add_test(tc, config_accepted);
	suite_add_tcase(s, tc);

	tc = tcase_create("runs");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, states);
	tcase_add_test(tc, request_shape);
	tcase_add_test(tc, unreachable);
	tcase_add_test(tc, out_of_descriptors);
	tcase_add_test(tc, cancel_in_flight);
	suite_add_tcase(s, tc);
	return s;
}

int
main(void)
{
	return tu_run(docker_suite());
}

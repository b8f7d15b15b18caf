/*
 * exec probes: argv splitting, configuration errors, and real runs of real
 * scripts: exit codes, output, signals, timeouts, process groups, the
 * environment, descriptors, users, and nothing left behind.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lbagent/core/argv.h"
#include "lbagent/sys/clock.h"
#include "lbagent/probes/exec.h"
#include "lbagent/probes/kinds.h"
#include "probeutil.h"
#include "testutil.h"

#define RUN_LIMIT_MS	20000	/* generous: machines are noisy */
#define FIXED_PATH \
	"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:" \
	"/usr/lib/nagios/plugins:/usr/lib/monitoring-plugins"

static char	self[PATH_MAX];		/* this test binary, for --child */

/* ---- argv splitting */

/* Splits s and compares with the NULL-terminated words. */
static void
split_ok(const char *s, const char *const *want)
{
	char		**argv;
	const char	 *why = NULL;
	int		  argc, i;

	argc = argv_split(s, &argv, &why);
	ck_assert_msg(argc > 0, "%s: %s", s, why);
	for (i = 0; want[i] != NULL; i++) {
		ck_assert_msg(i < argc, "%s: only %d words", s, argc);
		ck_assert_str_eq(argv[i], want[i]);
	}
	ck_assert_int_eq(argc, i);
	ck_assert_ptr_null(argv[argc]);
	argv_free(argv);
}

static void
split_bad(const char *s, const char *why_part)
{
	char		**argv = (char **)1;
	const char	 *why = NULL;

	ck_assert_msg(argv_split(s, &argv, &why) == -1, "%s accepted", s);
	ck_assert_ptr_null(argv);
	ck_assert_msg(strstr(why, why_part) != NULL, "%s: %s", s, why);
}

#define W(...)	((const char *const[]){ __VA_ARGS__, NULL })

START_TEST(split_words)
{
	split_ok("check_disk", W("check_disk"));
	split_ok("  a   b\tc  ", W("a", "b", "c"));
	split_ok("check_disk -w 10% -c 5% -p /", W("check_disk", "-w", "10%",
	    "-c", "5%", "-p", "/"));
	split_ok("a 'b c' \"d e\" f\\ g", W("a", "b c", "d e", "f g"));
	split_ok("a'b'\"c\"d", W("abcd"));
	split_ok("'' x \"\"", W("", "x", ""));
	split_ok("'a \\ \" $HOME `x` | ; > &'", W("a \\ \" $HOME `x` | ; > &"));
	split_ok("\"a\\\"b\\\\c\\$d\\`e\\nf\"", W("a\"b\\c$d`e\\nf"));
	split_ok("\\$HOME \\| \\; \\> \\& \\' \\\"", W("$HOME", "|", ";", ">",
	    "&", "'", "\""));
	split_ok("\"'single' inside\"", W("'single' inside"));
	split_ok("a\\\nb", W("ab"));
	split_ok("*.log ~ a#b [x] ?", W("*.log", "~", "a#b", "[x]", "?"));
	split_ok("cost $ 5$", W("cost", "$", "5$"));
	split_ok("sh -c 'echo hi | tr a-z A-Z'", W("sh", "-c",
	    "echo hi | tr a-z A-Z"));
}
END_TEST

START_TEST(split_errors)
{
	split_bad("", "empty command");
	split_bad("   \t ", "empty command");
	split_bad("a 'b", "unbalanced single quote");
	split_bad("a \"b", "unbalanced double quote");
	split_bad("a \"b\\\"", "unbalanced double quote");
	split_bad("a \\", "a backslash at the end");
	split_bad("a | b", "a pipe (|) needs a shell");
	split_bad("a|b", "a pipe (|) needs a shell");
	split_bad("a && b", "& or && needs a shell");
	split_bad("a &", "& or && needs a shell");
	split_bad("a; b", "a command separator (;) needs a shell");
	split_bad("a > /tmp/x", "redirection (< or >) needs a shell");
	split_bad("a 2>&1", "redirection (< or >) needs a shell");
	split_bad("a < /etc/passwd", "redirection (< or >) needs a shell");
	split_bad("a `id`", "command substitution (`...`) needs a shell");
	split_bad("a \"`id`\"", "command substitution (`...`)");
	split_bad("a $(id)", "command substitution ($(...)) needs a shell");
	split_bad("a \"$(id)\"", "command substitution ($(...))");
	split_bad("a $HOME", "variable expansion ($NAME) needs a shell");
	split_bad("a \"${HOME}\"", "variable expansion");
	split_bad("a $1", "variable expansion");
	split_bad("a $?", "variable expansion");
	split_bad("(a)", "a subshell");
	split_bad("a\nb", "a newline");
	/* Every one of them says what to do instead. */
	split_bad("a | b", "without one: quote it, or write sh -c '...' "
	    "explicitly");
}
END_TEST

/* ---- configuration */

START_TEST(conf_errors)
{
	struct pu	pu;
	char		*dir, *path, *saved_path;

	pu_init(&pu, &probe_exec_ops, NULL);
	ck_assert_str_eq(pu_check_bad(&pu), "command is required");
	ck_assert_ptr_nonnull(strstr(pu_set_bad(&pu, "command", "a | b"),
	    "sh -c"));
	ck_assert_str_eq(pu_set_bad(&pu, "command", ""), "empty command");
	ck_assert_str_eq(pu_set_bad(&pu, "command", "'x"),
	    "unbalanced single quote");
	ck_assert_str_eq(pu_set_bad(&pu, "user", ""), "expected a user name");
	ck_assert_str_eq(pu_set_bad(&pu, "timeout", "2s"), "unknown key");

	pu_set(&pu, "command", "''");
	ck_assert_str_eq(pu_check_bad(&pu), "the program's name is empty");
	pu_set(&pu, "command", "./check -v");
	ck_assert_str_eq(pu_check_bad(&pu), "./check: give the program as an "
	    "absolute path, or as a bare name found in the PATH");
	pu_set(&pu, "command", "check_nothing_such -w 1");
	ck_assert_str_eq(pu_check_bad(&pu), "check_nothing_such not found in "
	    FIXED_PATH " (give an absolute path)");
	/* Only the fixed PATH counts, never lbagent's own. */
	dir = tu_tmpdir();
	path = tu_write(dir, "check_only_here", "#!/bin/sh\n", -1);
	ck_assert_int_eq(chmod(path, 0755), 0);
	ck_assert_ptr_nonnull(saved_path = strdup(getenv("PATH")));
	ck_assert_int_eq(setenv("PATH", dir, 1), 0);
	pu_set(&pu, "command", "check_only_here");
	ck_assert_ptr_nonnull(strstr(pu_check_bad(&pu), "not found in"));
	ck_assert_int_eq(setenv("PATH", saved_path, 1), 0);
	free(saved_path);

	pu_set(&pu, "command", "true");
	pu_check(&pu);
	pu_set(&pu, "command", "/nonexistent/check");
	pu_check(&pu);		/* absolute paths are checked at each run */
	pu_set(&pu, "user", "no_such_user_here");
	ck_assert_str_eq(pu_check_bad(&pu), "unknown user no_such_user_here");
	pu_set(&pu, "user", "nobody");
	pu_check(&pu);
	pu_done(&pu);
	free(path);
	tu_rmtree(dir);
	free(dir);
}
END_TEST

/* ---- runs */

struct fixture {
	struct pu	 pu;
	char		*dir;
};

static void
fx_init_on(struct fixture *fx, struct event_base *base)
{
	pu_init_on(&fx->pu, &probe_exec_ops, base);
	fx->dir = tu_tmpdir();
	/* Readable by nobody too, for the user test. */
	ck_assert_int_eq(chmod(fx->dir, 0755), 0);
}

static void
fx_init(struct fixture *fx)
{
	fx_init_on(fx, NULL);
}

static void
fx_done(struct fixture *fx)
{
	int	zombies;

	pu_done(&fx->pu);
	ck_assert_int_eq(pu_count_children(&zombies), 0);
	tu_rmtree(fx->dir);
	free(fx->dir);
}

/* Writes an executable script; returns its path (for `command`). */
static char *
script(struct fixture *fx, const char *name, const char *body)
{
	char	*text, *path;

	/* Scripts run in /: $D is where they may write. */
	ck_assert_int_ne(asprintf(&text, "#!/bin/sh\nD='%s'\n%s\n", fx->dir,
	    body), -1);
	path = tu_write(fx->dir, name, text, -1);
	ck_assert_int_eq(chmod(path, 0755), 0);
	free(text);
	return path;
}

/* Sets the command to a script with that body and checks the conf. */
static void
use_script(struct fixture *fx, const char *body)
{
	char	*path = script(fx, "check", body);

	pu_set(&fx->pu, "command", path);
	pu_check(&fx->pu);
	free(path);
}

static const struct probe_outcome *
run_script(struct fixture *fx, const char *body)
{
	use_script(fx, body);
	return pu_run(&fx->pu, RUN_LIMIT_MS);
}

/* The result and reason, no value; an unknown is lbagent's own. */
static void
expect(const struct probe_outcome *out, enum probe_result result,
    const char *reason)
{
	ck_assert_msg(out->result == result, "%s, want %s (%s)",
	    probe_result_name(out->result), probe_result_name(result),
	    out->reason);
	ck_assert_str_eq(out->reason, reason);
	ck_assert(isnan(out->value));
	ck_assert_str_eq(out->unit, "");
	ck_assert(!out->from_check);
}

/* The check's own unknown (on_unknown governs it), no value. */
static void
expect_said(const struct probe_outcome *out, const char *reason)
{
	ck_assert_msg(out->result == PROBE_UNKNOWN && out->from_check,
	    "%s (from_check %d), want the check's unknown (%s)",
	    probe_result_name(out->result), out->from_check, out->reason);
	ck_assert_str_eq(out->reason, reason);
	ck_assert(isnan(out->value));
}

/* The result, reason, value and unit of a run. */
static void
expect_value(const struct probe_outcome *out, enum probe_result result,
    const char *reason, double value, const char *unit)
{
	ck_assert_msg(out->result == result, "%s, want %s (%s)",
	    probe_result_name(out->result), probe_result_name(result),
	    out->reason);
	ck_assert_int_eq(out->from_check, result == PROBE_UNKNOWN);
	ck_assert_str_eq(out->reason, reason);
	ck_assert_msg(isnan(value) ? isnan(out->value) : out->value == value,
	    "value %g, want %g", out->value, value);
	ck_assert_str_eq(out->unit, unit);
}

/* The pid a script wrote to dir/name, waiting for it to appear. */
static pid_t
read_pid(struct fixture *fx, const char *name)
{
	char	 path[PATH_MAX];
	int64_t	 until = clock_now_ms() + RUN_LIMIT_MS;
	FILE	*fp;
	long	 pid;

	snprintf(path, sizeof(path), "%s/%s", fx->dir, name);
	for (;;) {
		if ((fp = fopen(path, "re")) != NULL) {
			if (fscanf(fp, "%ld", &pid) == 1 && pid > 0) {
				fclose(fp);
				return (pid_t)pid;
			}
			fclose(fp);
		}
		ck_assert_msg(clock_now_ms() < until, "no %s", name);
		pu_loop_ms(&fx->pu, 20);
	}
}

START_TEST(exit_codes)
{
	struct fixture	fx;

	fx_init(&fx);
	expect(run_script(&fx, "echo 'DISK OK - free space: / 5000 MB'"),
	    PROBE_OK, "DISK OK - free space: / 5000 MB");
	expect(run_script(&fx, "echo 'DISK WARNING - 9% free'; exit 1"),
	    PROBE_WARN, "DISK WARNING - 9% free");
	expect(run_script(&fx, "echo 'DISK CRITICAL - 1% free'; exit 2"),
	    PROBE_CRIT, "DISK CRITICAL - 1% free");
	/* The guidelines' UNKNOWN, other codes and signals: unknown. */
	expect_said(run_script(&fx, "echo 'UNKNOWN - bad option'; exit 3"),
	    "UNKNOWN - bad option");
	expect_said(run_script(&fx, "exit 3"), "exit 3");
	expect_said(run_script(&fx, "exit 42"), "exit 42");
	expect_said(run_script(&fx, "echo 'oops'; exit 127"), "exit 127: oops");
	expect_said(run_script(&fx, "exit 255"), "exit 255");
	expect(run_script(&fx, "exit 0"), PROBE_OK, "exit 0");
	expect(run_script(&fx, "exit 1"), PROBE_WARN, "exit 1");
	expect(run_script(&fx, "exit 2"), PROBE_CRIT, "exit 2");
	expect_said(run_script(&fx, "echo dying; kill -9 $$"),
	    "killed by signal 9");
	expect_said(run_script(&fx, "kill -SEGV $$"), "killed by signal 11");
	fx_done(&fx);
}
END_TEST

START_TEST(reasons)
{
	struct fixture	 fx;
	char		 body[512], want[201];

	fx_init(&fx);
	expect(run_script(&fx, "echo 'first line'; echo second; exit 1"),
	    PROBE_WARN, "first line");
	expect(run_script(&fx, "printf 'no newline'"), PROBE_OK, "no newline");
	expect(run_script(&fx, "printf '  \\tpadded  \\n'"), PROBE_OK,
	    "padded");
	expect(run_script(&fx, "printf 'a\\033[31mb\\tc\\001d\\n'; exit 2"),
	    PROBE_CRIT, "a?[31mb c?d");
	expect(run_script(&fx, "printf 'nul\\000here\\n'"), PROBE_OK,
	    "nul?here");
	expect(run_script(&fx, "echo; echo 'after an empty line'"), PROBE_OK,
	    "exit 0");
	/* The first line, at most 200 bytes of it. */
	snprintf(body, sizeof(body), "printf '%%0300d\\n' 0; exit 2");
	memset(want, '0', 200);
	want[200] = '\0';
	expect(run_script(&fx, body), PROBE_CRIT, want);
	/* stderr goes nowhere; only stdout speaks. */
	expect(run_script(&fx, "echo oops >&2; echo fine"), PROBE_OK, "fine");
	fx_done(&fx);
}
END_TEST

/*
 * Performance data: out of the reason, the first item the value with its
 * unit, for every exit code of the guidelines; none from a program that
 * did not end with one of them.
 */
START_TEST(perfdata)
{
	struct fixture	fx;

	fx_init(&fx);
	expect_value(run_script(&fx, "echo 'TCP OK - 0.001 second response "
	    "time on 127.0.0.1 port 80|time=0.000917s;;;0.000000;10.000000'"),
	    PROBE_OK, "TCP OK - 0.001 second response time on 127.0.0.1 port 80",
	    0.000917, "s");
	expect_value(run_script(&fx, "echo 'LOAD WARNING - load average: "
	    "1.46|load1=1.460;0.000;1000.000;0; load5=1.330;0.000;1000.000;0;'"
	    "; exit 1"), PROBE_WARN, "LOAD WARNING - load average: 1.46", 1.46,
	    "");
	expect_value(run_script(&fx, "echo 'DISK CRITICAL - free space: / 1 MB"
	    " | /=98MB;90;95;0;100'; exit 2"), PROBE_CRIT,
	    "DISK CRITICAL - free space: / 1 MB", 98, "MB");
	expect_value(run_script(&fx, "echo \"QUEUE UNKNOWN | 'queue depth'=U"
	    " 'age s'=3s\"; exit 3"), PROBE_UNKNOWN, "QUEUE UNKNOWN", NAN, "");
	expect_value(run_script(&fx, "echo \"QUEUE UNKNOWN | 'age s'=3s\"; "
	    "exit 3"), PROBE_UNKNOWN, "QUEUE UNKNOWN", 3, "s");
	/* Long output: its perfdata is never the reason; its first item. */
	expect_value(run_script(&fx, "printf 'DISK OK\\n/boot 68 MB (69%%);"
	    " | /boot=68MB;88;93;0;98\\n/home=69357MB;253404\\n'"),
	    PROBE_OK, "DISK OK", 68, "MB");
	/* Only perfdata: the reason says the exit, the value stays. */
	expect_value(run_script(&fx, "echo '|x=5%'; exit 1"), PROBE_WARN,
	    "exit 1", 5, "%");
	/* Garbage is no value, and no error. */
	expect_value(run_script(&fx, "echo 'OK | x=1KiB'"), PROBE_OK, "OK",
	    NAN, "");
	/* Not a plugin's ending: the output measures nothing. */
	expect_said(run_script(&fx, "echo 'OK | x=1s'; exit 4"), "exit 4: OK");
	expect_said(run_script(&fx, "echo 'OK | x=1s'; kill -9 $$"),
	    "killed by signal 9");
	fx_done(&fx);
}
END_TEST

START_TEST(floods)
{
	struct fixture			 fx;
	const struct probe_outcome	*out;
	char				 want[201];

	fx_init(&fx);
	/* 100 KiB: far more than a pipe holds; the child must not block. */
	expect(run_script(&fx, "echo 'LOTS OF OUTPUT'; "
	    "yes 0123456789abcdef | head -c 102400; exit 1"),
	    PROBE_WARN, "LOTS OF OUTPUT");
	/* 3 MiB in one line: read and dropped, the first 200 bytes kept. */
	memset(want, 'x', 200);
	want[200] = '\0';
	expect(run_script(&fx, "head -c 3145728 /dev/zero | tr '\\0' x; "
	    "exit 2"), PROBE_CRIT, want);
	/* Past 4 MiB it is killed, whatever it would have said. */
	out = run_script(&fx, "head -c 8388608 /dev/zero | tr '\\0' x; "
	    "exit 2");
	ck_assert_msg(out->result == PROBE_UNKNOWN && out->from_check,
	    "%s: %s", probe_result_name(out->result), out->reason);
	ck_assert_str_eq(out->reason, "output larger than 4 MiB, killed");
	/* Writing for ever ends there too, long before the timeout. */
	out = run_script(&fx, "exec yes");
	ck_assert_msg(out->result == PROBE_UNKNOWN && out->from_check,
	    "%s: %s", probe_result_name(out->result), out->reason);
	ck_assert_str_eq(out->reason, "output larger than 4 MiB, killed");
	fx_done(&fx);
}
END_TEST

START_TEST(cannot_run)
{
	struct fixture	 fx;
	char		*path, want[PATH_MAX + 64];

	fx_init(&fx);
	pu_set(&fx.pu, "command", "/nonexistent/check_x -w 1");
	pu_check(&fx.pu);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_CRIT,
	    "cannot run /nonexistent/check_x: No such file or directory");
	path = script(&fx, "notexec", "echo never");
	ck_assert_int_eq(chmod(path, 0644), 0);
	pu_set(&fx.pu, "command", path);
	pu_check(&fx.pu);
	snprintf(want, sizeof(want), "cannot run %s: Permission denied", path);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_CRIT, want);
	free(path);
	fx_done(&fx);
}
END_TEST

/* A bare name is found in the fixed PATH, and arguments arrive intact. */
START_TEST(bare_names_and_arguments)
{
	struct fixture	 fx;
	char		*path, cmd[PATH_MAX + 64];

	fx_init(&fx);
	/* Joined by ',': a '|' would begin performance data. */
	pu_set(&fx.pu, "command", "printf '%s,%s,%s' 'a b' \"c\\\"d\" e\\ f");
	pu_check(&fx.pu);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_OK, "a b,c\"d,e f");
	/* $0 is argv[0] as written. */
	path = script(&fx, "args", "echo \"$# [$1] [$2] [$3]\"");
	snprintf(cmd, sizeof(cmd), "%s '' \"two words\" '$HOME'", path);
	pu_set(&fx.pu, "command", cmd);
	pu_check(&fx.pu);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_OK,
	    "3 [] [two words] [$HOME]");
	free(path);
	fx_done(&fx);
}
END_TEST

START_TEST(minimal_environment)
{
	struct fixture	fx;

	fx_init(&fx);
	ck_assert_int_eq(setenv("LBAGENT_SECRET", "hunter2", 1), 0);
	ck_assert_int_eq(setenv("HOME", "/root", 1), 0);
	/* sh adds PWD; the rest is what execve got. */
	expect(run_script(&fx, "env | sort | tr '\\n' ' '"), PROBE_OK,
	    "LANG=C PATH=" FIXED_PATH " PWD=/");
	fx_done(&fx);
}
END_TEST

/*
 * The child's descriptors, process group and signal state, seen from the
 * program itself: this binary run with --child.
 */
START_TEST(child_setup)
{
	struct fixture	 fx;
	char		 cmd[PATH_MAX + 32];
	sigset_t	 block;
	int		 fd, extra;

	fx_init(&fx);
	/* Descriptors lbagent might leak if it forgot CLOEXEC. */
	ck_assert_int_ne(fd = open("/dev/null", O_RDONLY), -1);
	ck_assert_int_ne(extra = dup(fd), -1);
	/* A disposition and a mask the program must not inherit. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, NULL);
	snprintf(cmd, sizeof(cmd), "%s --child", self);
	pu_set(&fx.pu, "command", cmd);
	pu_check(&fx.pu);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_OK,
	    "fds 0:/dev/null 1:pipe 2:/dev/null; own group; "
	    "SIGPIPE default; nothing blocked");
	close(fd);
	close(extra);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &block, NULL);
	fx_done(&fx);
}
END_TEST

START_TEST(as_nobody)
{
	struct fixture	fx;

	fx_init(&fx);
	ck_assert_int_eq(geteuid(), 0);
	pu_set(&fx.pu, "user", "nobody");
	expect(run_script(&fx, "echo \"$(id -u) $(id -g) $(id -G)\""),
	    PROBE_OK, "65534 65534 65534");
	fx_done(&fx);
}
END_TEST

START_TEST(user_needs_root)
{
	struct fixture	fx;

	fx_init(&fx);
	pu_set(&fx.pu, "user", "nobody");
	use_script(&fx, "echo never");
	ck_assert_int_eq(seteuid(65534), 0);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_CRIT, "cannot run as user "
	    "nobody: lbagent is not running as root");
	ck_assert_int_eq(seteuid(0), 0);
	fx_done(&fx);
}
END_TEST

/*
 * lbagent out of descriptors is not the checked program failing: unknown,
 * with where it ran out, whether in the parent (pipes, pidfd) or in the
 * child before the exec. With them back, the same probe runs again.
 */
START_TEST(out_of_descriptors)
{
	struct fixture	 fx;
	struct tu_fds	 fds;
	char		*path, want[PATH_MAX + 128];
	int		 base_fds;

	fx_init(&fx);
	path = script(&fx, "check", "echo fine");
	pu_set(&fx.pu, "command", path);
	pu_check(&fx.pu);
	base_fds = pu_count_fds();
	tu_fds_exhaust(&fds, 0);
	snprintf(want, sizeof(want), "cannot start %s: pipe: Too many open "
	    "files (lbagent out of descriptors)", path);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_UNKNOWN, want);
	tu_fds_release(&fds);
	/* One pipe, not the second (the first is not leaked). */
	tu_fds_exhaust(&fds, 2);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_UNKNOWN, want);
	tu_fds_release(&fds);
	/*
	 * All the parent needs (the pidfd takes a pipe end it closed after
	 * the fork); the child lacks the descriptors it dups its pipes to.
	 */
	tu_fds_exhaust(&fds, 4);
	snprintf(want, sizeof(want), "cannot run %s: Too many open files "
	    "(lbagent out of descriptors)", path);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_UNKNOWN, want);
	tu_fds_release(&fds);
	ck_assert_int_eq(pu_count_fds(), base_fds);
	expect(pu_run(&fx.pu, RUN_LIMIT_MS), PROBE_OK, "fine");
	free(path);
	fx_done(&fx);
}
END_TEST

/* Starts a script that records its pid (and maybe more) and cancels it. */
static pid_t
start_and_cancel(struct fixture *fx, const char *body)
{
	pid_t	pid;

	use_script(fx, body);
	pu_start(&fx->pu);
	pid = read_pid(fx, "pid");
	ck_assert_int_eq(fx->pu.nreports, 0);
	pu_cancel(&fx->pu);
	return pid;
}

START_TEST(timeout_term)
{
	struct fixture	fx;
	pid_t		pid;

	fx_init(&fx);
	pid = start_and_cancel(&fx, "echo $$ > \"$D/pid\"; exec sleep 60");
	pu_drain(&fx.pu, RUN_LIMIT_MS);
	ck_assert_int_eq(fx.pu.nreports, 0);
	ck_assert(!pu_alive(pid));
	ck_assert_int_eq(kill(-pid, 0), -1);
	fx_done(&fx);
}
END_TEST

START_TEST(timeout_ignoring_term)
{
	struct fixture	fx;
	pid_t		pid, child;

	fx_init(&fx);
	pid = start_and_cancel(&fx, "trap '' TERM; sleep 60 & "
	    "echo $! > \"$D/sleeper\"; echo $$ > \"$D/pid\"; wait; wait; wait");
	child = read_pid(&fx, "sleeper");
	/* SIGTERM is sent by cancel itself; SIGKILL needs the loop. */
	usleep(300000);
	ck_assert(pu_alive(pid));
	ck_assert(pu_alive(child));
	pu_drain(&fx.pu, RUN_LIMIT_MS);
	ck_assert_int_eq(fx.pu.nreports, 0);
	ck_assert(pu_wait_dead(pid, RUN_LIMIT_MS));
	ck_assert(pu_wait_dead(child, RUN_LIMIT_MS));
	fx_done(&fx);
}
END_TEST

/* What a script leaves running in its group dies with it. */
START_TEST(grandchildren)
{
	struct fixture	fx;
	pid_t		pid, gc;

	fx_init(&fx);
	/* At the timeout... */
	pid = start_and_cancel(&fx, "sleep 60 & echo $! > \"$D/gc\"; "
	    "echo $$ > \"$D/pid\"; sleep 60");
	gc = read_pid(&fx, "gc");
	pu_drain(&fx.pu, RUN_LIMIT_MS);
	ck_assert(pu_wait_dead(pid, RUN_LIMIT_MS));
	ck_assert(pu_wait_dead(gc, RUN_LIMIT_MS));
	/* ...and when it exits, even with the output pipe held open. */
	expect(run_script(&fx, "sleep 60 & echo $! > \"$D/gc2\"; echo done"),
	    PROBE_OK, "done");
	gc = read_pid(&fx, "gc2");
	ck_assert(pu_wait_dead(gc, RUN_LIMIT_MS));
	fx_done(&fx);
}
END_TEST

/*
 * What a program leaves outside its group (setsid, two deep, ignoring
 * SIGTERM) is killed and reaped when its run ends, is cancelled, or at
 * shutdown, once this process is a subreaper as lbagent is.
 */
START_TEST(leftovers_outside_the_group)
{
	struct fixture	fx;
	pid_t		pid, left;
	int		zombies;

	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	fx_init(&fx);
	/* A run that ends. */
	expect(run_script(&fx, "/usr/bin/setsid sleep 60 & "
	    "echo $! > \"$D/left\"; echo done"), PROBE_OK, "done");
	left = read_pid(&fx, "left");
	pu_drain(&fx.pu, RUN_LIMIT_MS);
	ck_assert(!pu_alive(left));
	ck_assert_int_eq(pu_count_children(&zombies), 0);
	/* A run cancelled at its timeout. */
	use_script(&fx, "D=\"$D\" /usr/bin/setsid sh -c 'trap \"\" TERM; "
	    "sleep 60 & echo $! > \"$D/left2\"; wait' & "
	    "echo $$ > \"$D/pid\"; exec sleep 60");
	pu_start(&fx.pu);
	left = read_pid(&fx, "left2");
	pid = read_pid(&fx, "pid");
	pu_cancel(&fx.pu);
	pu_drain(&fx.pu, RUN_LIMIT_MS);
	ck_assert_int_eq(fx.pu.nreports, 0);
	ck_assert(!pu_alive(pid));
	ck_assert(!pu_alive(left));
	ck_assert_int_eq(pu_count_children(&zombies), 0);
	/* lbagent stopping with such a run in flight. */
	use_script(&fx, "/usr/bin/setsid sleep 60 & echo $! > \"$D/left3\"; "
	    "exec sleep 60");
	pu_start(&fx.pu);
	left = read_pid(&fx, "left3");
	pu_cancel(&fx.pu);
	probe_exec_reap_all();
	ck_assert(!pu_alive(left));
	ck_assert_int_eq(pu_count_children(&zombies), 0);
	pu_drain(&fx.pu, RUN_LIMIT_MS);
	fx_done(&fx);
}
END_TEST

START_TEST(reap_all_at_shutdown)
{
	struct fixture	fx;
	pid_t		pid;
	int		zombies;

	fx_init(&fx);
	pid = start_and_cancel(&fx, "trap '' TERM; echo $$ > \"$D/pid\"; "
	    "while :; do sleep 1; done");
	probe_exec_reap_all();
	ck_assert_int_eq(pu_count_children(&zombies), 0);
	ck_assert(pu_wait_dead(pid, RUN_LIMIT_MS));
	pu_drain(&fx.pu, RUN_LIMIT_MS);		/* nothing left to do */
	ck_assert_int_eq(fx.pu.nreports, 0);
	probe_exec_reap_all();			/* and again is harmless */
	fx_done(&fx);
}
END_TEST

/* Many runs, side by side, some cancelled: nothing leaks, nothing lingers. */
START_TEST(no_leaks)
{
	enum { N = 21, KINDS = 7, CANCELLED = 5, ROUNDS = 3 };
	struct fixture	 fx[N];
	const char	*bodies[KINDS] = {
		"echo ok",
		"echo warn; exit 1",
		"exit 3",
		"yes | head -c 200000",
		"kill -9 $$",
		/* from here on: cancelled */
		"sleep 60",
		"trap '' TERM; sleep 60 & sleep 60",
	};
	int		 base_fds, zombies, i, r;

	/* All on one loop, as in lbagent. */
	fx_init(&fx[0]);
	for (i = 1; i < N; i++)
		fx_init_on(&fx[i], fx[0].pu.base);
	for (i = 0; i < N; i++)
		use_script(&fx[i], bodies[i % KINDS]);
	base_fds = pu_count_fds();
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < N; i++)
			pu_start(&fx[i].pu);
		for (i = 0; i < N; i++)
			if (i % KINDS < CANCELLED && fx[i].pu.nreports == 0)
				pu_wait(&fx[i].pu, RUN_LIMIT_MS);
		pu_loop_ms(&fx[0].pu, 100);
		for (i = 0; i < N; i++) {
			if (i % KINDS >= CANCELLED) {
				ck_assert_int_eq(fx[i].pu.nreports, 0);
				pu_cancel(&fx[i].pu);
			}
		}
		pu_drain(&fx[0].pu, RUN_LIMIT_MS);
		for (i = 0; i < N; i++)
			ck_assert_int_eq(fx[i].pu.nreports,
			    i % KINDS >= CANCELLED ? 0 : 1);
		ck_assert_int_eq(pu_count_fds(), base_fds);
		ck_assert_int_eq(pu_count_children(&zombies), 0);
		ck_assert_int_eq(zombies, 0);
	}
	for (i = N - 1; i >= 0; i--)
		fx_done(&fx[i]);
}
END_TEST

/* ---- the child side of child_setup */

/* What the program finds when it starts; prints one line. */
static int
child_report(void)
{
	char		 link[64], target[PATH_MAX], out[512];
	struct dirent	*e;
	DIR		*d;
	sigset_t	 mask;
	struct sigaction sa;
	size_t		 n = 0;
	ssize_t		 len;
	int		 fd, sig, blocked = 0;

	n += (size_t)snprintf(out + n, sizeof(out) - n, "fds");
	if ((d = opendir("/proc/self/fd")) == NULL)
		return 1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || (fd = atoi(e->d_name)) == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		if ((len = readlink(link, target, sizeof(target) - 1)) < 0)
			return 1;
		target[len] = '\0';
		if (strncmp(target, "pipe:", 5) == 0)
			target[4] = '\0';
		n += (size_t)snprintf(out + n, sizeof(out) - n, " %d:%s", fd,
		    target);
	}
	closedir(d);
	n += (size_t)snprintf(out + n, sizeof(out) - n, "; %s",
	    getpgrp() == getpid() ? "own group" : "lbagent's group");
	sigaction(SIGPIPE, NULL, &sa);
	n += (size_t)snprintf(out + n, sizeof(out) - n, "; SIGPIPE %s",
	    sa.sa_handler == SIG_DFL ? "default" : "not default");
	sigprocmask(SIG_SETMASK, NULL, &mask);
	for (sig = 1; sig < 32; sig++)
		blocked += sigismember(&mask, sig) == 1;
	snprintf(out + n, sizeof(out) - n, "; %s\n",
	    blocked ? "signals blocked" : "nothing blocked");
	fputs(out, stdout);
	return 0;
}

int
main(int argc, char **argv)
{
	Suite	*s;
	TCase	*tc;
	ssize_t	 n;

	if (argc == 2 && strcmp(argv[1], "--child") == 0)
		return child_report();
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return 1;
	self[n] = '\0';

	s = suite_create("probe_exec");
	tc = tcase_create("argv");
	tcase_add_test(tc, split_words);
	tcase_add_test(tc, split_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("conf");
	tcase_add_test(tc, conf_errors);
	suite_add_tcase(s, tc);
	tc = tcase_create("runs");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, exit_codes);
	tcase_add_test(tc, reasons);
	tcase_add_test(tc, perfdata);
	tcase_add_test(tc, floods);
	tcase_add_test(tc, cannot_run);
	tcase_add_test(tc, out_of_descriptors);
	tcase_add_test(tc, bare_names_and_arguments);
	tcase_add_test(tc, minimal_environment);
	tcase_add_test(tc, child_setup);
	tcase_add_test(tc, as_nobody);
	tcase_add_test(tc, user_needs_root);
	tcase_add_test(tc, timeout_term);
	tcase_add_test(tc, timeout_ignoring_term);
	tcase_add_test(tc, grandchildren);
	tcase_add_test(tc, reap_all_at_shutdown);
	tcase_add_test(tc, leftovers_outside_the_group);
	tcase_add_test(tc, no_leaks);
	suite_add_tcase(s, tc);
	return tu_run(s);
}

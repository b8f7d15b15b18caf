"""The postgres probe against a real PostgreSQL server (Debian's
`postgresql` package: initdb and pg_ctl into the temp dir, run as an
unprivileged user, on a free loopback port and a socket directory there),
every case judged through lbagent's status JSON (lbagentctl status --json)
and its agent replies:

- SELECT 1 is ok; expect_value on a text column; a number the test changes
  in a table goes ok -> warn -> crit through warn/crit;
- a wrong password and no password at all (scram via pg_hba for a role with
  a password) are each "authentication failed"; the role's password in a
  passfile (mode 0600) works; neither password is ever in the log, the
  status or a reply, nor in `lbagent -c`'s words for a bad conninfo;
- a query error says its SQLSTATE; expect_role primary on the primary is
  ok, standby is "is a primary, expected standby";
- SELECT pg_sleep(60) past the timeout: "query cancelled by the server
  (statement_timeout)", agent replies keep coming meanwhile, and once
  lbagent is stopped no such query is left on the server (pg_stat_activity
  through psql as the superuser over the socket): the server cancelled it,
  the probe did not merely walk away from it;
- a standby made with pg_basebackup -R: expect_role standby ok, primary
  "is a standby, expected primary", and the issue's replication-lag query,
  0 while nothing was replayed, warn once a replayed commit ages;
- the server stopped mid-run (pg_ctl stop -m immediate): "cannot connect:
  Connection refused", then ok again once it is started;
- `lbagent -c` says nothing of a host name (the probe resolves it with
  evdns, never libpq: tests/integration/test_69_postgres_dns)."""

import glob
import json
import os
import pwd
import subprocess
import sys
import uuid

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

INTERVAL_MS = 1000
TIMEOUT_MS = 800
BOUND_S = h.probe_bound_s(INTERVAL_MS, TIMEOUT_MS)
MARK = "lbagent_slow_" + uuid.uuid4().hex[:10]
APP_PASSWORD = "app-pw-" + uuid.uuid4().hex[:12]
WRONG_PASSWORD = "wrong-pw-" + uuid.uuid4().hex[:12]
SECRETS = (APP_PASSWORD, WRONG_PASSWORD)


def pg_bin():
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        raise h.TestFailure("no /usr/lib/postgresql/*/bin/initdb: scripts/deps test "
                            "installs the postgresql package")
    return os.path.dirname(found[-1])


def pg_user():
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise h.TestFailure("neither a user postgres nor nobody to run the server as")


class PgServer:
    """A PostgreSQL cluster in dir, as user, on 127.0.0.1:port and a
    socket in dir."""

    def __init__(self, name, port, user, bindir, base_backup_of=None):
        self.name, self.port, self.user, self.bin = name, port, user, bindir
        self.dir = h.env().path(name)
        self.data = os.path.join(self.dir, "data")
        self.log_path = os.path.join(self.dir, "server.log")
        os.makedirs(self.dir)
        os.chown(self.dir, user.pw_uid, user.pw_gid)
        if base_backup_of is None:
            self.run("initdb", "-N", "-A", "trust", "-U", "postgres", "-D", self.data)
            with open(os.path.join(self.data, "pg_hba.conf"), "w") as f:
                f.write("local all all trust\n"
                        "local replication postgres trust\n"
                        "host all postgres 127.0.0.1/32 trust\n"
                        "host replication postgres 127.0.0.1/32 trust\n"
                        "host all all 127.0.0.1/32 scram-sha-256\n")
        else:
            src = base_backup_of
            self.run("pg_basebackup", "-h", src.dir, "-p", str(src.port), "-U", "postgres",
                     "-D", self.data, "-R", "-X", "stream", "-c", "fast")
        h.env().register(self)
        self.start()

    def run(self, prog, *args, check=True):
        argv = ["setpriv", f"--reuid={self.user.pw_uid}", f"--regid={self.user.pw_gid}",
                "--clear-groups", os.path.join(self.bin, prog)] + list(args)
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60, cwd=self.dir)
        out = r.stdout.decode(errors="replace")
        if check and r.returncode != 0:
            raise h.TestFailure(f"{prog} {' '.join(args)}: exit {r.returncode}\n{out}")
        return out

    def start(self):
        opts = (f"-c port={self.port} -c listen_addresses=127.0.0.1 "
                f"-c unix_socket_directories={self.dir} -c fsync=off "
                f"-c synchronous_commit=off -c full_page_writes=off "
                f"-c shared_buffers=16MB -c max_connections=30 -c max_wal_senders=4")
        self.run("pg_ctl", "start", "-w", "-t", "30", "-D", self.data, "-l", self.log_path,
                 "-o", opts)

    def stop(self, mode="fast"):
        self.run("pg_ctl", "stop", "-w", "-m", mode, "-D", self.data)

    def running(self):
        return os.path.exists(os.path.join(self.data, "postmaster.pid"))

    def sql(self, query):
        """psql as the superuser over the socket; the rows' text."""
        return self.run("psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres",
                        "-d", "postgres", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                        "-c", query).strip()

    def close(self):
        if self.running():
            self.run("pg_ctl", "stop", "-m", "immediate", "-D", self.data, check=False)

    def diagnostics(self):
        try:
            with open(self.log_path, errors="replace") as f:
                tail = f.read().splitlines()[-30:]
        except OSError as e:
            tail = [str(e)]
        return f"== postgres {self.name} (port {self.port}) log tail:\n" + "\n".join(tail)


def tcp(port, user="postgres", **extra):
    """A conninfo over TCP to 127.0.0.1:port."""
    kv = {"host": "127.0.0.1", "port": str(port), "user": user, "dbname": "postgres",
          "sslmode": "disable", "gssencmode": "disable", **extra}
    return " ".join(f"{k}={v}" for k, v in kv.items())


def probe(conninfo, **keys):
    p = {"type": "postgres", "conninfo": conninfo, "interval": f"{INTERVAL_MS}ms",
         "timeout": f"{TIMEOUT_MS}ms"}
    p.update(keys)
    return p


def status(lb):
    rc, out, err = h.lbagentctl("-f", lb.config_path, "status", "--json")
    # 3: the service is not serving, as some probes here are crit.
    h.expect(rc in (0, 3), f"lbagentctl status --json: exit {rc}: {err}")
    for secret in SECRETS:
        h.expect(secret not in out and secret not in err,
                 "a password in lbagentctl status --json")
    return out


def probes_of(text):
    doc = json.loads(text)
    return {p["name"]: p for s in doc["services"] for p in s["probes"]}


def last(lb, name):
    """(result, reason, value) of the probe's last run, or None."""
    p = probes_of(status(lb)).get(name)
    if p is None or p["last"] is None:
        return None
    return (p["last"]["result"], p["last"]["reason"], p["last"]["value"])


def wait_probe(lb, name, result, reason_starts, what=None, timeout_s=BOUND_S):
    what = what or f"probe {name}: {result} {reason_starts!r}..."
    return h.wait_until(lambda: last(lb, name), timeout_s, what,
                        ok=lambda t: t is not None and t[0] == result and
                        t[1].startswith(reason_starts))


def no_secrets(lb, where):
    text = lb.log()
    for secret in SECRETS:
        h.expect(secret not in text, f"a password in lbagent's log ({where})")


def main():
    h.require_kinds("postgres")
    bindir = pg_bin()
    user = pg_user()
    os.chmod(h.tmpdir(), 0o755)
    port = h.free_port()

    h.section(f"initdb and start a server on 127.0.0.1:{port} as {user.pw_name}")
    pg = PgServer("primary", port, user, bindir)
    pg.sql(f"CREATE ROLE app LOGIN PASSWORD '{APP_PASSWORD}'")
    pg.sql("CREATE TABLE gauge (v numeric); INSERT INTO gauge VALUES (5); "
           "GRANT SELECT ON gauge TO app")

    passfile = h.env().path("pgpass")
    with open(passfile, "w") as f:
        f.write(f"127.0.0.1:{port}:postgres:app:{APP_PASSWORD}\n")
    os.chmod(passfile, 0o600)

    h.section("lbagent -c: a bad conninfo never shows it; a host name is fine")
    rc, out, path = h.check_config(
        f"[probe p]\ntype = postgres\nconninfo = host=127.0.0.1 password={WRONG_PASSWORD} "
        "port\n")
    h.expect(rc != 0 and "conninfo: " in out and WRONG_PASSWORD not in out,
             f"a bad conninfo: an error without the conninfo:\n{out}")
    rc, out, path = h.check_config(
        "[probe p]\ntype = postgres\nconninfo = "
        f"postgresql://app:{WRONG_PASSWORD}@db.invalid/app\n")
    h.expect(rc == 0 and "warning" not in out and WRONG_PASSWORD not in out,
             f"a host name: no warning, exit 0:\n{out}")

    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "http": {"listen": f"unix:{h.tmpdir()}/http.sock"},
        "probe ok": probe(tcp(port)),
        "probe value": probe(tcp(port), query="SELECT 'hello'::text AS greeting",
                             expect_value="hello"),
        "probe gauge": probe(tcp(port), query="SELECT v FROM gauge", warn="10", crit="20"),
        "probe badpw": probe(tcp(port, "app", password=WRONG_PASSWORD)),
        "probe nopw": probe(tcp(port, "app")),
        "probe passfile": probe(tcp(port, "app"), passfile=passfile),
        "probe qerr": probe(tcp(port), query="SELECT * FROM no_such_table"),
        "probe primary": probe(tcp(port), expect_role="primary"),
        "probe notstandby": probe(tcp(port), expect_role="standby"),
    }, extra_env={"PGPASSFILE": "/nonexistent/lbagent-test/pgpass"})

    h.section("SELECT 1, expect_value, a query error, the roles")
    wait_probe(lb, "ok", "ok", "query ok in ")
    wait_probe(lb, "value", "ok", 'greeting is "hello"')
    wait_probe(lb, "qerr", "crit", 'query failed: 42P01 relation "no_such_table" does not '
               'exist')
    wait_probe(lb, "primary", "ok", "query ok in ")
    wait_probe(lb, "notstandby", "crit", "is a primary, expected standby")

    h.section("a number through warn and crit")
    t = wait_probe(lb, "gauge", "ok", "v 5")
    h.expect_equal(t[2], 5.0, "the value of `v 5`")
    pg.sql("UPDATE gauge SET v = 12")
    wait_probe(lb, "gauge", "warn", "v 12 (warn 10)")
    pg.sql("UPDATE gauge SET v = 25.5")
    t = wait_probe(lb, "gauge", "crit", "v 25.5 (crit 20)")
    h.expect_equal(t[2], 25.5, "the value of `v 25.5`")
    pg.sql("DELETE FROM gauge")
    wait_probe(lb, "gauge", "crit", "the query returned no rows")

    h.section("passwords: wrong, none, from a passfile")
    wait_probe(lb, "badpw", "crit", 'authentication failed: password authentication failed '
               'for user "app"')
    wait_probe(lb, "nopw", "crit", "authentication failed: the server asks for a password "
               "and none is given")
    wait_probe(lb, "passfile", "ok", "query ok in ")
    r = h.wait_reply(lb, h.starts(b"down #"), "a down reply (some probes are crit)")
    h.expect(all(s.encode() not in r for s in SECRETS), f"a password in the reply {r!r}")
    no_secrets(lb, "after the authentication cases")

    h.section("a standby from pg_basebackup -R")
    sport = h.free_port()
    standby = PgServer("standby", sport, user, bindir, base_backup_of=pg)
    lag = ("SELECT COALESCE(EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()), 0) "
           "AS lag_s")
    lbs = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "http": {"listen": f"unix:{h.tmpdir()}/http-standby.sock"},
        "probe standby": probe(tcp(sport), expect_role="standby"),
        "probe notprimary": probe(tcp(sport), expect_role="primary"),
        "probe lag": probe(tcp(sport), query=lag, warn="2", crit="3600"),
    }, name="lbagent-standby")
    wait_probe(lbs, "standby", "ok", "query ok in ")
    wait_probe(lbs, "notprimary", "crit", "is a standby, expected primary")
    wait_probe(lbs, "lag", "ok", "lag_s 0")
    # A commit replayed on the standby, then none: its age is the "lag".
    pg.sql("INSERT INTO gauge VALUES (1)")
    wait_probe(lbs, "lag", "warn", "lag_s ", "the lag past warn 2 once a replayed commit "
               "ages", timeout_s=BOUND_S + 3)
    lbs.stop()
    h.env().forget(lbs)
    standby.stop("immediate")

    h.section("the server stopped mid-run, then started again")
    pg.stop("immediate")
    wait_probe(lb, "ok", "crit", f"cannot connect: Connection refused (127.0.0.1:{port})")
    pg.start()
    wait_probe(lb, "ok", "ok", "query ok in ", "ok again once the server is back")
    lb.stop()
    no_secrets(lb, "at the end")

    h.section("pg_sleep(60) past the timeout: the server cancels it")
    slow = h.Lbagent({
        "agent": {**h.IMMEDIATE, "reply_reasons": "yes"},
        "http": {"listen": f"unix:{h.tmpdir()}/http-slow.sock"},
        "probe slow": probe(tcp(port), query=f"SELECT pg_sleep(60) AS {MARK}"),
    }, name="lbagent-slow")
    h.wait_reply(slow, h.starts(b"down #slow: query cancelled by the server after "),
                 "the statement timeout's reason in the reply")
    t = last(slow, "slow")
    h.expect(t[1].startswith("query cancelled by the server after ") and
             t[1].endswith("ms (statement_timeout)"), f"the reason: {t[1]!r}")
    # Replies come on time while queries sleep on the server.
    for _ in range(10):
        h.expect(h.well_formed(slow.ask()), "a well-formed reply while pg_sleep runs")
    h.wait_until(lambda: pg.sql(f"SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                                f"'%{MARK}%' AND pid <> pg_backend_pid()"),
                 BOUND_S, "a pg_sleep query of the probe on the server",
                 ok=lambda n: n == "1")
    slow.stop()
    # An abandoned pg_sleep(60) would stay for a minute: the server's
    # statement_timeout (under the probe's 800ms) ends it long before.
    h.wait_until(lambda: pg.sql(f"SELECT count(*) FROM pg_stat_activity WHERE query LIKE "
                                f"'%{MARK}%' AND pid <> pg_backend_pid()"),
                 10, "no pg_sleep query of the probe left on the server",
                 ok=lambda n: n == "0")


if __name__ == "__main__":
    h.run(main)

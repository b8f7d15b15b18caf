"""lbagentctl never writes a raw control byte, whatever the daemon, its
peers or HAProxy hold. One lbagent (node n1, its HTTP API on a unix
socket) is made to hold hostile strings, each with a terminal escape
(ESC [2J), the C1 CSI (U+009B in UTF-8, and the raw byte 0x9b where the
source allows it), BEL, DEL and a carriage return:

- a drain marker whose reason has them (the file's raw bytes);
- an agent-send text with them, sent to its agent port;
- a peer (a served /status) whose node_id and service state have them;
- a load balancer (a served HAProxy stats CSV) whose status, agent status
  and another server's name have them.

Every command that shows them, in a C and in a UTF-8 locale: status,
status --short, status --json, why, fleet, fleet --json, and the error
paths: an unknown --service with escapes (the answer lists the daemon's
services), a drain marker that lbagent cannot reflect in time (its reason
in the message), an API that answers HTTP 500 with an escape in its
error, one that answers a body that is not JSON (the parser's message
quotes it), and check of a configuration with escapes. Nothing in stdout
or stderr is below 0x20 except newline and tab, DEL, or a C1 control
(raw or in UTF-8); in the C locale nothing is 0x80 or above; the escaped
forms are there (the strings were shown, not dropped); --json is JSON that
reads back to the same strings."""

import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

NODE = "n1"
EVIL = "\x1b[2J\u009b31m\x07\x7f\r"      # as text: in JSON documents
EVIL_BYTES = b"\x1b[2J\xc2\x9b31m\x9b\x07\x7f\r"   # raw: files, the agent port
PEER_INTERVAL_MS = 200
LOCALES = ("C", "C.UTF-8")


def bad_bytes(data, utf8):
    """The offending bytes of data, with where they are."""
    bad = []
    for i, b in enumerate(data):
        if (b < 0x20 and b not in (0x0a, 0x09)) or b == 0x7f:
            bad.append((i, hex(b)))
        elif b >= 0x80 and not utf8:
            bad.append((i, hex(b)))
    if utf8:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            bad.append((e.start, "invalid UTF-8"))
        else:
            bad += [(i, f"U+{ord(c):04X}") for i, c in enumerate(text)
                    if 0x80 <= ord(c) <= 0x9f]
    return bad


def ctl(*args, locale="C", timeout_s=60):
    env = dict(os.environ)
    for k in ("LANG", "LANGUAGE", "LC_CTYPE", "LC_MESSAGES"):
        env.pop(k, None)
    env["LC_ALL"] = locale
    argv = [h.lbagentctl_exe()] + list(args)
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        raise h.TestFailure(f"`{argv}` did not finish within {timeout_s} s") from None
    return r.returncode, r.stdout, r.stderr


def safe_run(what, *args, expect_rc=None, want=(), timeout_s=60):
    """Runs lbagentctl in each locale; every byte checked; returns the C
    locale's (rc, stdout, stderr)."""
    first = None
    for loc in LOCALES:
        rc, out, err = ctl(*args, locale=loc, timeout_s=timeout_s)
        for name, data in (("stdout", out), ("stderr", err)):
            bad = bad_bytes(data, loc != "C")
            h.expect(not bad, f"{what} ({loc}): {name} has raw control bytes "
                     f"{bad[:8]}: {data[:2000]!r}")
        if expect_rc is not None:
            h.expect_equal(rc, expect_rc, f"{what} ({loc}) exit status "
                           f"(stdout {out[:500]!r}, stderr {err[:500]!r})")
        both = out + err
        for w in want:
            h.expect(w in both, f"{what} ({loc}): {w!r} not in {both[:3000]!r}")
        if first is None:
            first = (rc, out, err)
    return first


def csv(hostile):
    cols = ["pxname", "svname", "qcur", "scur", "status", "weight", "act",
            "bck", "check_status", "agent_status", "uweight"]
    rows = [["be", "BACKEND", "0", "0", "UP", "100", "1", "0", "", "", ""],
            ["be", NODE, "0", "0", "UP" + hostile, "100", "1", "0", "L4OK",
             "L7OK" + hostile, "100"],
            ["be", "n2" + hostile, "0", "0", "UP", "100", "1", "0", "L4OK",
             "L7OK", "100"]]
    lines = ["# " + ",".join(cols)] + [",".join(r) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def main():
    e = h.env()
    lbstats = h.HttpStub(name="lbstats")
    lbstats.set("/stats;csv", 200, csv(EVIL.replace("\r", "")),
                content_type="text/csv")
    peer = h.HttpStub(name="peer")
    peer.set_json("/status", {
        "node_id": "n2", "incarnation": 3, "detail": False,
        "services": [{"name": "", "state": "up" + EVIL, "weight": 100,
                      "serving": True, "automation": "auto" + EVIL}]})
    api_sock = os.path.join(e.dir, "api.sock")
    lb = h.Lbagent({"agent": {"node_id": NODE},
                    "http": {"listen": f"unix:{api_sock}"},
                    "peers": {"agents": peer.url("").rstrip("/"),
                              "interval": f"{PEER_INTERVAL_MS}ms"},
                    "haproxy": {"sources": lbstats.url("/stats;csv"),
                                "backend": "be", "server": NODE}})
    api = f"unix:{api_sock}"
    base = ["-f", lb.config_path, "-s", api]

    h.section("the daemon holds the hostile strings")
    tmp = lb.marker_path("drain") + ".tmp"
    with open(tmp, "wb") as f:
        f.write(b"deploy " + EVIL_BYTES + b" done\n")
    os.replace(tmp, lb.marker_path("drain"))
    for _ in range(3):
        lb.ask(send=b"web" + EVIL_BYTES + b"\n")

    def detail():
        status, doc = h.http_json(api, "/status?fresh=1")
        return doc if status == 200 else None

    def holds(doc):
        lb.ask(send=b"web" + EVIL_BYTES + b"\n")
        if doc is None:
            return False
        text = json.dumps(doc)
        return ("deploy" in text and "web\\\\x1b" in text and
                any(p.get("answered") for p in doc.get("peers") or []) and
                any(m.get("found") for src in doc.get("haproxy") or []
                    for m in src.get("this_node") or []))
    h.wait_until(detail, h.startup_bound_s() + 10, "the marker, the agent-send "
                 "text, the peer's answer and HAProxy's row in the detail",
                 ok=holds, describe=lambda d: json.dumps(d)[-3000:])

    h.section("status, status --short, why, fleet of the real daemon")
    commands = (["status"], ["status", "--short"], ["why"], ["fleet"],
                ["status", "--json"], ["fleet", "--json"])
    for cmd in commands:
        safe_run(" ".join(cmd), *base, *cmd)
    doc = detail()

    h.section("the same commands on a served status with escapes in every string")
    # What a hostile or broken daemon could answer: the real detail, an
    # escape after every string (then the enumerations, which choose the
    # paths, left as they were).
    enums = {"state", "scope", "kind", "automation", "result", "counted",
             "towards", "liveness", "from", "to", "status", "name"}

    def poison(v, key=None, all_=True):
        if isinstance(v, dict):
            return {k: poison(x, k, all_) for k, x in v.items()}
        if isinstance(v, list):
            return [poison(x, key, all_) for x in v]
        if isinstance(v, str) and (all_ or key not in enums):
            return v + EVIL
        return v
    served = h.HttpStub(name="served")
    shown = []
    for all_ in (True, False):
        served.set_json("/status", poison(doc, all_=all_))
        sbase = ["-f", lb.config_path, "-s", served.url("").rstrip("/")]
        for cmd in commands:
            shown.append((cmd, all_, safe_run(f"{' '.join(cmd)} (served, "
                                              f"every string: {all_})",
                                              *sbase, *cmd)[1]))
    # Shown, escaped, not dropped. status --short's one line per service cuts
    # its WHY column at 80 columns, the escape after the reason with it
    # (the marker's reason, and "(no other node serving)" since the peer
    # guard sees none): there the escape is looked for where the service's
    # name carries it too (every string poisoned); raw bytes are refused in
    # every output above.
    for cmd, all_, out in shown:
        if cmd == ["status", "--short"] and not all_:
            continue
        if "--json" in cmd:
            h.expect(json.loads(out)["node_id"] == "n1" + EVIL,
                     f"{cmd}: the strings read back whole: {out[:2000]!r}")
        else:
            h.expect(b"\\x1b[2J" in out, f"{cmd} (served): the escape is "
                     f"shown escaped: {out[:3000]!r}")

    h.section("error paths")
    safe_run("status --service with escapes", *base, "status", "--service",
             "x\x1b[2J\u009b", expect_rc=2, want=[b"--service 'x\\x1b[2J"])
    # The services the answer lists, named by a served status.
    served.set_json("/status", poison(doc))
    safe_run("status --service the daemon does not have", "-f", lb.config_path,
             "-s", served.url("").rstrip("/"), "status", "nosuch",
             expect_rc=1, want=[b"no service 'nosuch' (it has \\x1b[2J"])
    # A served status that never shows the drain: the timeout names what
    # it shows and the reason it waited for.
    os.unlink(lb.marker_path("drain"))
    rc, out, err = safe_run("drain on, not reflected in time", "-f",
                            lb.config_path, "-s", served.url("").rstrip("/"),
                            "drain", "on", "--reason", "r\x1b[2J\u009b",
                            "--timeout", "1s", want=[b"did not reflect it",
                                                      b"expected state drain"])
    h.expect(rc != 0, f"drain on that lbagent cannot reflect: exit {rc}")
    os.unlink(lb.marker_path("drain"))

    bad_api = h.HttpStub(name="badapi")
    bad_api.set_json("/status", {"error": "no" + EVIL}, status=500)
    safe_run("an API answering HTTP 500", "-f", lb.config_path, "-s",
             bad_api.url("").rstrip("/"), "status", expect_rc=1,
             want=[b"answered HTTP 500: no\\x1b[2J"])
    junk_api = h.HttpStub(name="junkapi")
    junk_api.set("/status", 200, b"\x1b[2J\xc2\x9b\x9b{", content_type="application/json")
    safe_run("an API answering what is not JSON", "-f", lb.config_path, "-s",
             junk_api.url("").rstrip("/"), "why", expect_rc=1,
             want=[b"not lbagent's status"])

    bad_conf = os.path.join(e.dir, "bad.conf")
    with open(bad_conf, "wb") as f:
        f.write(b"[agent]\nlisten = 127.0.0.1:1\nnode_id = " + EVIL_BYTES +
                b"\n[service w" + EVIL_BYTES + b"]\n")
    safe_run("check of a configuration with escapes", "-f", bad_conf, "check",
             expect_rc=1)
    print("ok")


if __name__ == "__main__":
    h.run(main)

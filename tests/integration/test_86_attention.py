"""What needs the operator while every service serves, said by lbagentctl
status (text, --short, --json) and why: their first line and exit status
5 (issue 32).

- a check whose agent-send names no service (`aip` for `api`) is kept by
  name: /status's unknown_names (from, checks, recent), /metrics'
  lbagent_unknown_service_name_checks_total{name="aip"} beside the total,
  and `ATTENTION: 127.0.0.1 asks for service 'aip', ...` as the first
  line; exit 5, with a service named too (the typo is the node's);
- names are kept escaped, in the metric's label too, and only the 16 most
  recently asked for: 40 more names keep 16 series, the rest counted as
  dropped;
- a reload that adds the service forgets the name: exit 0 again;
- a failed reload: `ATTENTION: running an older configuration` first and
  exit 5, until a reload succeeds."""

import os
import re
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

TYPO = "ATTENTION: 127.0.0.1 asks for service 'aip', which does not exist"
OLDER = "ATTENTION: running an older configuration: the last reload"


def ctl(lb, *args):
    rc, out, err = h.lbagentctl("-f", lb.config_path, "-t", "10", *args, timeout_s=30)
    return rc, out + err


def first_line(out):
    return out.splitlines()[0] if out else ""


def name_series(sock):
    _, _, body = h.http_request(sock, "/metrics")
    return dict(re.findall(r'^lbagent_unknown_service_name_checks_total\{name="(.*)"\} (\S+)$',
                           body.decode(), re.M))


def config(d, services, extra=""):
    text = ("[agent]\nlisten = 127.0.0.1:{port}\nstate_dir = {state_dir}\n"
            "down_after = 0\ndegrade_after = 0\nup_after = 0\nrestore_after = 0\nramp = 0\n"
            f"[http]\nlisten = unix:{d}/api.sock\n"
            "[probe p]\ntype = file\npath = /\ninterval = 200ms\ntimeout = 150ms\n")
    for s in services:
        text += f"[service {s}]\nprobes = p\n"
    return text + extra


def expect_all_forms(lb, rc_want, line_want, what):
    for args in (("status", "--short"), ("status",), ("why",), ("status", "api")):
        rc, out = ctl(lb, *args)
        h.expect_equal(rc, rc_want, f"{what}: lbagentctl {' '.join(args)} exit status:\n{out}")
        if line_want is not None:
            h.expect(first_line(out).startswith(line_want),
                     f"{what}: lbagentctl {' '.join(args)}'s first line:\n{out}")
        else:
            h.expect("ATTENTION" not in out, f"{what}: nothing to attend to:\n{out}")
    rc, out = ctl(lb, "status", "--json")
    h.expect_equal(rc, rc_want, f"{what}: lbagentctl status --json exit status:\n{out}")


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    sock = f"unix:{d}/api.sock"
    lb = h.Lbagent(config(d, ["api"]))
    h.wait_healthy(lb, "up at start")
    h.wait_healthy(lb, "api up", send=b"api\n")
    expect_all_forms(lb, 0, None, "all serve")

    h.section("a name no service has: kept, shown first, exit 5")
    h.expect_equal(lb.ask(b"aip\n"), b"up\n", "aip answered as the default")
    st = h.http_json(sock, "/status")[1]
    names = [{k: n[k] for k in ("name", "from", "checks", "recent")} for n in st["unknown_names"]]
    h.expect_equal(names, [{"name": "aip", "from": "127.0.0.1", "checks": 1, "recent": True}],
                   "/status's unknown_names")
    h.expect_equal(name_series(sock), {"aip": "1"}, "the per-name series")
    expect_all_forms(lb, 5, TYPO, "a typo asked for")

    h.section("names escaped, 16 kept")
    lb.ask(b'we"ird\x01\n')
    st = h.http_json(sock, "/status")[1]
    h.expect("we\\x22ird\\x01" in [n["name"] for n in st["unknown_names"]],
             f"the odd name escaped: {st['unknown_names']}")
    h.expect_equal(name_series(sock).get("we\\\\x22ird\\\\x01"), "1",
                   "the odd name's label, its backslashes escaped")
    for i in range(40):
        lb.ask(f"n{i:02d}\n".encode())
    st = h.http_json(sock, "/status")[1]
    kept = sorted(n["name"] for n in st["unknown_names"])
    h.expect_equal(kept, [f"n{i:02d}" for i in range(24, 40)], "the 16 most recent names")
    h.expect_equal(st["unknown_names_dropped"], 26, "names that gave way")
    h.expect_equal(sorted(name_series(sock)), kept, "16 series")

    h.section("a reload that adds the service forgets its name")
    d2 = os.path.join(d, "second")
    os.makedirs(d2)
    lb2 = h.Lbagent(config(d2, ["api"]))
    sock2 = f"unix:{d2}/api.sock"
    h.wait_healthy(lb2, "lb2 up")
    lb2.ask(b"aip\n")
    expect_all_forms(lb2, 5, TYPO, "lb2's typo")
    with open(lb2.config_path, "w") as f:
        f.write(lb2._render(config(d2, ["api", "aip"])))
    os.kill(lb2.pid, 1)
    h.wait_until(lambda: h.http_json(sock2, "/status")[1], 10, "the reload",
                 ok=lambda s: s["reloads"] == 1 and s["last_reload"]["ok"] is True)
    h.expect_equal(h.http_json(sock2, "/status")[1]["unknown_names"], [],
                   "the name a service now has is gone")
    h.wait_healthy(lb2, "aip up", send=b"aip\n")
    expect_all_forms(lb2, 0, None, "after the reload")

    h.section("a failed reload: an older configuration runs")
    with open(lb2.config_path, "a") as f:
        f.write("[probe broken]\ntype = file\n")
    os.kill(lb2.pid, 1)
    h.wait_until(lambda: h.http_json(sock2, "/status")[1], 10, "the failed reload",
                 ok=lambda s: s["reloads"] == 2 and s["last_reload"]["ok"] is False)
    expect_all_forms(lb2, 5, OLDER, "the failed reload")


if __name__ == "__main__":
    h.run(main)

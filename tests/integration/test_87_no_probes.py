"""A service with no probe behind it is said as such everywhere (issue 32):
the shipped configuration's default service has none.

- `lbagent -c` warns, with file:line (the [agent] line), unless `[agent]
  no_probes = yes` says it is meant; a probe no [service] names gives the
  default one, and no warning;
- /health answers 203 (a 2xx HAProxy's http-check and readiness probes
  take, that `http-check expect status 200` refuses) with
  `"no_probes": true`; drained, 503 as any service; with a probe, 200;
- /status (public and detail) says `no_probes`; `status --short`'s WHY and
  `why` say `no probes: up unless a marker says otherwise`; `fleet` shows
  its state as `up?` with the legend."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

WARNING = ("warning: the default service (no agent-send, `default`, or a name no "
           "[service] has) has no probes")
WHY = "no probes: up unless a marker says otherwise"


def ctl(lb, *args):
    rc, out, err = h.lbagentctl("-f", lb.config_path, "-t", "10", *args, timeout_s=30)
    return rc, out + err


def conf(d, agent_extra="", probe=False):
    text = ("; lbagent\n[agent]\nlisten = 127.0.0.1:{port}\nstate_dir = {state_dir}\n"
            f"{agent_extra}[http]\nlisten = unix:{d}/api.sock\n")
    if probe:
        text += "[probe p]\ntype = file\npath = /\ninterval = 200ms\ntimeout = 150ms\n"
    return text


def main():
    d = h.tmpdir()

    h.section("lbagent -c: the warning with file:line, unless meant")
    rc, out, path = h.check_config(conf(d).replace("{port}", "1").replace(
        "{state_dir}", d), name="noprobes")
    h.expect(rc == 0 and f"{path}:2: {WARNING}" in out and "no_probes = yes" in out,
             f"-c on a default service with no probes:\n{out}")
    rc, out, path = h.check_config(conf(d, "no_probes = yes\n").replace(
        "{port}", "1").replace("{state_dir}", d), name="meant")
    h.expect(rc == 0 and "warning" not in out, f"-c with no_probes = yes:\n{out}")
    rc, out, path = h.check_config(conf(d, probe=True).replace("{port}", "1").replace(
        "{state_dir}", d), name="probed")
    h.expect(rc == 0 and "warning" not in out, f"-c with a probe:\n{out}")
    rc, out, _ = h.check_config(open(os.path.join(
        os.path.dirname(__file__), "..", "..", "conf", "lbagent.conf")).read(), name="shipped")
    h.expect(WARNING in out, f"-c on the shipped configuration warns:\n{out}")

    h.section("/health: 203 with no probes, 503 drained")
    lb = h.Lbagent(conf(d))
    sock = f"unix:{d}/api.sock"
    h.wait_healthy(lb, "up at start")
    h.expect(WARNING in lb.log(), f"the load warns in the log too:\n{lb.log()}")
    code, body = h.http_json(sock, "/health")
    h.expect_equal((code, body["state"], body["serving"], body["no_probes"]),
                   (203, "up", True, True), f"/health with no probes: {body}")
    pub = h.http_json(sock, "/status")[1]
    h.expect(pub["services"][0]["no_probes"] is True, f"/status says no_probes: {pub}")

    h.section("status, why, fleet")
    rc, out = ctl(lb, "status", "--short")
    h.expect(rc == 0 and WHY in out, f"status --short's WHY:\n{out}")
    rc, out = ctl(lb, "why")
    h.expect(rc == 0 and WHY in out, f"why:\n{out}")
    rc, out = ctl(lb, "fleet")
    rows = [l for l in out.splitlines() if l.split() and l.split()[0].endswith("*")]
    h.expect(rc == 0 and rows and rows[0].split()[1] == "up?" and
             "?: no probes, up unless a marker says otherwise." in out, f"fleet:\n{out}")

    lb.set_marker("drain", "deploy\n")
    h.wait_reply(lb, b"drain up #deploy\n", "drained", timeout_s=h.marker_bound_s())
    code, body = h.http_json(sock, "/health")
    h.expect_equal(code, 503, f"/health drained: {body}")
    lb.stop()

    h.section("with a probe: 200 and no_probes false")
    d2 = os.path.join(d, "probed")
    os.makedirs(d2)
    lb2 = h.Lbagent(conf(d2, probe=True))
    h.wait_healthy(lb2, "up with its probe")
    code, body = h.http_json(f"unix:{d2}/api.sock", "/health")
    h.expect_equal((code, body["no_probes"]), (200, False), f"/health with a probe: {body}")
    rc, out = ctl(lb2, "fleet")
    h.expect("up?" not in out and "no probes" not in out, f"fleet with a probe:\n{out}")


if __name__ == "__main__":
    h.run(main)

"""An agent-send text that names no service, with the real HAProxy: a node
with [service api], and a backend whose agent-send is `aip\\n` (a typo).

- the typo is still answered as the default service (taking servers out
  over a name would be worse): with api drained by its own marker, the
  `aip` server stays UP while the `api` server goes DRAIN;
- the log says so at warning level once for that load balancer, however
  many checks it makes: `127.0.0.2 "aip": asks for service 'aip', which
  does not exist; answered as the default`;
- status lists it under the default service's load balancers, with
  `warning` saying the same; lbagentctl status shows it there;
- `lbagent_unknown_service_checks_total` counts its checks;
- `default\\n` asks for the default service by its name: answered by it,
  no warning; `api\\n` names a service: no warning either;
- on a node without [service] sections any text only tells load balancers
  apart: nothing is said about it."""

import os
import re
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

WARNING = "asks for service 'aip', which does not exist; answered as the default"


def ctl(*args):
    """lbagentctl's exit status and what it wrote, stdout then stderr."""
    rc, out, err = h.lbagentctl(*args, timeout_s=30)
    return rc, out + err


def unknown_counter(where):
    _, _, body = h.http_request(where, "/metrics")
    m = re.search(r"^lbagent_unknown_service_checks_total (\S+)$", body.decode(), re.M)
    if m is None:
        raise h.TestFailure(f"no lbagent_unknown_service_checks_total:\n{body.decode()}")
    return float(m.group(1))


def main():
    h.require_haproxy()
    h.require_kinds("file")
    d = h.tmpdir()
    sock = "unix:" + os.path.join(d, "api.sock")
    lb = h.Lbagent({
        "agent": {**h.IMMEDIATE, "request_timeout": "500ms"},
        "http": {"listen": sock},
        "probe p": {"type": "file", "path": "/", "interval": "200ms", "timeout": "150ms"},
        "service api": {"probes": "p"},
    })
    h.wait_healthy(lb, "up at start")
    os.makedirs(os.path.join(lb.state_dir, "api"), exist_ok=True)
    h.write_atomic(os.path.join(lb.state_dir, "api", "drain"), "deploy\n")
    h.wait_reply(lb, b"drain up #deploy\n", "api drained", send=b"api\n",
                 timeout_s=h.marker_bound_s())

    hap = h.Haproxy(backends={
        "btypo": [h.Server("s1", lb, agent_send="aip")],
        "bapi": [h.Server("s1", lb, agent_send="api")],
        "bdef": [h.Server("s1", lb, agent_send="default")],
    })
    src = hap.source

    h.section("the typo is answered as the default: UP, while api drains")
    hap.wait_status("bapi", "s1", "DRAIN (agent)", h.startup_bound_s(), "bapi/s1 DRAIN")
    hap.wait_status("btypo", "s1", "UP", h.startup_bound_s(), "btypo/s1 UP",
                    ok=lambda st: h.agent_result(st) == "L7OK")
    hap.wait_status("bdef", "s1", "UP", h.startup_bound_s(), "bdef/s1 UP",
                    ok=lambda st: h.agent_result(st) == "L7OK")

    def default_lbs():
        s = h.http_json(sock, "/status")[1]
        return {lb_["text"]: lb_ for lb_ in s["services"][0]["load_balancers"]
                if lb_["address"] == src}

    h.section("status lists it under the default service's load balancers")
    lbs = h.wait_until(default_lbs, h.agent_checks_bound_s(3),
                       "three checks from the typo's load balancer",
                       ok=lambda m: "aip" in m and m["aip"]["checks"] >= 3)
    h.expect_equal(lbs["aip"]["warning"], WARNING, "the typo's warning in status")
    h.expect("default" in lbs and lbs["default"]["warning"] is None,
             f"`default` asks for the default service: no warning: {lbs.get('default')}")
    api = h.http_json(sock, "/status")[1]["services"][1]
    h.expect(all(x["warning"] is None for x in api["load_balancers"]),
             f"api's own load balancers: no warning: {api['load_balancers']}")

    h.section("the log says it once, at warning level")
    log = lb.log()
    lines = [l for l in log.splitlines() if "asks for service" in l]
    h.expect_equal([re.sub(r"^\S+ ", "", l) for l in lines],
                   [f'warning: {src} "aip": {WARNING}'], "the warning, once")

    h.section("the metric counts its checks")
    n = unknown_counter(sock)
    h.expect(n >= 3, f"lbagent_unknown_service_checks_total {n}, want >= 3")
    more = h.wait_until(lambda: unknown_counter(sock), h.agent_checks_bound_s(2),
                        "more checks counted", ok=lambda v: v > n)
    h.expect(sum("asks for service" in l for l in lb.log().splitlines()) == 1,
             f"still one warning after {more} checks")

    h.section("lbagentctl status shows it under the load balancers")
    rc, out = ctl("-f", lb.config_path, "-t", "10", "status")
    # 3: not every service serves (api is drained), as for systemctl
    # is-active.
    h.expect_equal(rc, 3, f"lbagentctl status exit status:\n{out}")
    at = out.find(f'{src} "aip"')
    h.expect(at != -1 and WARNING in re.sub(r"\s+", " ", out[at:]),
             f"lbagentctl status: the typo's load balancer and its warning:\n{out}")
    hap.close()

    h.section("without [service] sections a text only tells keys apart")
    solo = h.Lbagent({
        "agent": {**h.IMMEDIATE},
        "http": {"listen": "unix:" + os.path.join(d, "solo.sock")},
        "probe p": {"type": "file", "path": "/", "interval": "200ms", "timeout": "150ms"},
    })
    h.wait_healthy(solo, "solo up")
    solo_sock = "unix:" + os.path.join(d, "solo.sock")
    hap = h.Haproxy(backends={"bapp": [h.Server("s1", solo, agent_send="app")]})

    def solo_keys():
        s = h.http_json(solo_sock, "/status")[1]
        return [x for x in s["services"][0]["load_balancers"] if x["text"] == "app"]
    keys = h.wait_until(solo_keys, h.startup_bound_s() + h.agent_checks_bound_s(3),
                        "three checks of `app`", ok=lambda k: k and k[0]["checks"] >= 3)
    h.expect(keys[0]["warning"] is None, f"solo's `app` key: no warning: {keys}")
    h.expect("asks for service" not in solo.log(), "solo logs nothing about `app`")
    h.expect_equal(unknown_counter(solo_sock), 0.0,
                   "solo counts nothing")


if __name__ == "__main__":
    h.run(main)

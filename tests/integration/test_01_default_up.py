"""A default-style configuration: HAProxy sees the server UP through a
successful agent check, a raw check gets exactly "up\\n", `-c` accepts a good
configuration and names FILE:LINE for an unknown key, SIGTERM exits 0."""

import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402


def check_config():
    h.section("-c on a good configuration")
    good = h.ini_text({"agent": {
        "listen": f"127.0.0.1:{h.free_port()}",
        "state_dir": h.tmpdir(),
        "max_connections": 1024,
        "reply_reasons": "yes",
        "lb_forget_after": "10m",
    }})
    rc, out, path = h.check_config(good, name="good")
    h.expect(rc == 0 and "configuration OK" in out,
             f"`lbagent -c -f {path}` on a valid configuration: expected exit 0 and "
             f"'configuration OK', got exit {rc} and output:\n{out}\n--- config ---\n{good}")

    h.section("-c on a configuration with an unknown key on line 3")
    bad = ("[agent]\n"
           f"listen = 127.0.0.1:{h.free_port()}\n"
           "no_such_key = 1\n"
           f"state_dir = {h.tmpdir()}\n")
    rc, out, path = h.check_config(bad, name="bad")
    h.expect(rc == 1 and f"{path}:3:" in out and "configuration OK" not in out,
             f"`lbagent -c -f {path}` with an unknown key on line 3: expected exit 1 "
             f"and an error starting '{path}:3:', got exit {rc} and output:\n{out}")


def main():
    check_config()

    h.section("default configuration, one HAProxy")
    lb = h.Lbagent()        # only listen and state_dir: everything else default
    hap = h.Haproxy([lb])
    st = hap.wait_status("be", "s1", "UP", h.startup_bound_s(),
                         "s1 UP with a successful agent check (agent_status L7OK)",
                         ok=lambda st: h.agent_result(st) == "L7OK")
    ss = hap.server_state("be", "s1")
    h.expect(ss["srv_op_state"] == 2 and ss["srv_admin_state"] == 0,
             f"expected srv_op_state 2 and srv_admin_state 0, saw {ss}")
    h.expect_equal(st["weight"], "100", "HAProxy weight with an 'up' agent")

    h.section("raw agent check")
    h.expect_equal(lb.ask(), b"up\n", "raw agent check (nothing sent)")
    # From an address of its own: from one lbagent knows as never sending
    # text it answers and closes at once, and a line a moment behind the
    # connection (a busy machine) would meet a reset.
    h.expect_equal(lb.ask(send=b"web\n", source="127.0.1.2"), b"up\n",
                   "raw agent check sending 'web\\n'")

    h.section("SIGTERM")
    lb.stop(expect_rc=0)


h.run(main)

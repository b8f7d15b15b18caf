"""A node out when lbagent stops, restarted with a configuration that no
longer has the failing probe: it stays out until up_after of passing (the
safety is kept), but the reply and the log say why instead of quoting the
gone probe's last failure:

- `down #held from before the restart: nagios-http (probe removed); up
  after 3s of passing`, from the first reply after the restart;
- the log says the state came from before the restart and that the probe
  is no longer in the configuration;
- after up_after it is up again;
- restarted with the probe still there (and now passing), the held reply
  quotes the probe as before."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

UP_AFTER = "3s"
HELD = (b"down #held from before the restart: nagios-http (probe removed); "
        b"up after 3s of passing\n")


def config(lb, probes):
    sections = {"agent": {**h.IMMEDIATE, "up_after": UP_AFTER,
                          "listen": f"127.0.0.1:{lb.port}", "state_dir": lb.state_dir},
                "http": {"listen": "none"}}
    sections.update(probes)
    return h.ini_text(sections)


def write(lb, text):
    with open(lb.config_path, "w") as f:
        f.write(text)


def go_down(lb, probes, what):
    write(lb, config(lb, probes))
    if lb.alive():
        lb.stop()
    lb.start()
    h.wait_until(lb.ask, 10, f"{what}: down by nagios-http",
                 ok=lambda r: r.startswith(b"down #nagios-http: "))


def main():
    h.require_kinds("tcp", "file")
    d = h.tmpdir()
    closed = h.free_port()          # nothing listens there
    ok_file = os.path.join(d, "ok")
    open(ok_file, "w").close()
    failing = {"probe nagios-http": {"type": "tcp", "address": f"127.0.0.1:{closed}",
                                     "interval": "500ms", "timeout": "400ms"}}
    other = {"probe disk-ok": {"type": "file", "path": ok_file, "interval": "200ms",
                               "timeout": "100ms"}}
    lb = h.Lbagent(start=False)

    h.section("down by nagios-http, restarted without it")
    go_down(lb, {**failing, **other}, "first run")
    mark = lb.log_mark()
    write(lb, config(lb, other))
    lb.restart()
    h.expect_equal(lb.ask(), HELD, "the first reply after the restart")
    text = lb.log_since(mark)
    h.expect("down as before the restart (nagios-http: " in text and
             "but that probe is no longer in the configuration: staying down "
             "until the rules pass for 3s (up_after)" in text,
             f"the log says why it is held:\n{text}")
    h.expect('reply changed at start-up: "' + HELD.decode().strip() + '"' in text,
             f"the log has the new reply:\n{text}")
    h.wait_until(lb.ask, 30, "up after up_after of passing",
                 ok=lambda r: r == b"up\n")

    h.section("down by nagios-http, restarted with it, now passing")
    go_down(lb, {**failing, **other}, "second run")
    listener = h.backend_stub()      # nagios-http's address now answers
    passing = {"probe nagios-http": {**failing["probe nagios-http"],
                                     "address": f"127.0.0.1:{listener.port}"}}
    write(lb, config(lb, {**passing, **other}))
    lb.restart()
    r = lb.ask()
    h.expect(r.startswith(b"down #nagios-http: "),
             f"the probe is still there: its reason as before, {r!r}")
    h.wait_until(lb.ask, 30, "up after up_after of passing",
                 ok=lambda r: r == b"up\n")
    lb.stop()


h.run(main)

"""`-d` (`--debug`) makes lbagent log at debug level too; without it, no
debug line is ever written. An HTTP probe against a closed port fails with
`connection refused` (logged at notice), and libcurl's own words for it
(`Failed to connect ...`) are logged just before, at debug: they show with
`-d` and `--debug`, and not without. `-h` names the option."""

import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

NOTICE = "notice: probe api: crit: connection refused"
# What every libcurl says first; the rest differs (7.x: `127.0.0.1 port N
# after 0 ms: ...`, 8.x: `127.0.0.1:N after 0 ms`).
DEBUG = "debug: probe api: libcurl: Failed to connect to 127.0.0.1"


def config():
    return {"probe api": {"type": "http", "url": f"http://127.0.0.1:{h.free_port()}/health",
                          "interval": "200ms", "timeout": "100ms"}}


def probe_failed(lb):
    h.wait_until(lb.log, h.startup_bound_s(), f"`{NOTICE}` in the log",
                 ok=lambda log: NOTICE in log, describe=lambda log: log[-400:])
    return lb.log()


def main():
    h.require_kinds("http")

    h.section("-h names -d")
    r = subprocess.run([h.lbagent_exe(), "-h"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=30)
    out = r.stdout.decode(errors="replace")
    h.expect(r.returncode == 0 and "-d, --debug" in out, f"lbagent -h:\n{out}")

    h.section("without -d: no debug line")
    lb = h.Lbagent(config(), name="plain")
    log = probe_failed(lb)
    h.expect(" debug: " not in log, f"a debug line without -d:\n{log}")
    lb.stop()

    for opt in ("-d", "--debug"):
        h.section(f"with {opt}: libcurl's words at debug")
        lb = h.Lbagent(config(), name="debug", args=[opt])
        log = probe_failed(lb)
        h.expect(DEBUG in log, f"with {opt}, want `{DEBUG}...` in the log:\n{log}")
        lb.stop()


h.run(main)

"""Which backend a service is judged against, and where that is said
([haproxy] backend, or the service's own): a [service] that names none
silently took [haproxy]'s, and the peer guard and drain --wait judged it
against the wrong backend with `lbagent -c` saying OK.

- `lbagent -c` warns, with the service's file:line, for the service that
  inherits, and for none that names its backend (even [haproxy]'s own);
- the /status detail gives each service's backend: name, from
  ("haproxy" or "service"), the line of the key, inherited;
- `lbagentctl status` shows the backend line of each, the inherited one
  with what to write.

What the source answers does not matter here (the backend is the
configuration's): it is an address nothing listens on."""

import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

WARNING = ("warning: [service web]: judged against backend app, inherited from "
           "[haproxy] backend (line {line}): name its own (backend = ...), or "
           "backend = app to keep it")


def main():
    h.require_kinds("file")
    d = h.tmpdir()
    sock = "unix:" + os.path.join(d, "api.sock")
    lb = h.Lbagent({
        # no_probes: the default service's own warning is test_87's.
        "agent": {**h.IMMEDIATE, "no_probes": "yes"},
        "http": {"listen": sock},
        "haproxy": {"sources": f"http://127.0.0.1:{h.free_port()}/stats;csv",
                    "backend": "app"},
        "probe p": {"type": "file", "path": "/", "interval": "200ms", "timeout": "150ms"},
        "service web": {"probes": "p"},
        "service api": {"probes": "p", "backend": "api_be"},
        "service same": {"probes": "p", "backend": "app"},
    })
    lines = open(lb.config_path).read().splitlines()

    def line_of(section, key=None):
        at = lines.index(f"[{section}]")
        if key is None:
            return at + 1
        for n in range(at + 1, len(lines)):
            if lines[n].startswith("["):
                break
            if lines[n].split("=")[0].strip() == key:
                return n + 1
        raise h.TestFailure(f"no {key} in [{section}]:\n" + "\n".join(lines))

    hx, web = line_of("haproxy", "backend"), line_of("service web")
    api, same = line_of("service api", "backend"), line_of("service same", "backend")

    h.section("lbagent -c: the inheriting service warned with its line, no other")
    r = subprocess.run([h.lbagent_exe(), "-c", "-f", lb.config_path],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    out = r.stdout.decode()
    h.expect(r.returncode == 0, f"the configuration is valid (exit {r.returncode}):\n{out}")
    want = f"{lb.config_path}:{web}: " + WARNING.format(line=hx)
    h.expect(want in out.splitlines(), f"`lbagent -c` says {want!r}:\n{out}")
    h.expect(out.count("warning:") == 1, f"one warning, for web only:\n{out}")

    h.section("the detail: each service's backend and where it is said")
    h.wait_healthy(lb, "up at start")
    code, _, body = h.http_request(sock, "/status")
    h.expect_equal(code, 200, "/status over the unix socket")
    svcs = {s["name"]: s for s in json.loads(body)["services"]}
    for name, want in (("", {"name": "app", "from": "haproxy", "line": hx,
                             "inherited": False}),
                       ("web", {"name": "app", "from": "haproxy", "line": hx,
                                "inherited": True}),
                       ("api", {"name": "api_be", "from": "service", "line": api,
                                "inherited": False}),
                       ("same", {"name": "app", "from": "service", "line": same,
                                 "inherited": False})):
        h.expect_equal(svcs[name].get("backend"), want, f"{name or 'default'}'s backend")

    h.section("lbagentctl status: a backend line per service")
    rc, out, err = h.lbagentctl("-f", lb.config_path, "status", timeout_s=30)
    h.expect(rc == 0, f"lbagentctl status exits 0: {rc}\n{err}")
    for want in (f"backend     app, inherited from [haproxy] (line {hx}): name it in "
                 "[service",
                 f"backend     api_be ([service api] backend, line {api})",
                 f"backend     app ([service same] backend, line {same})",
                 f"backend     app ([haproxy] backend, line {hx})"):
        h.expect(any(ln.strip().startswith(want) for ln in out.splitlines()),
                 f"lbagentctl status shows {want!r}:\n{out}")


if __name__ == "__main__":
    h.run(main)

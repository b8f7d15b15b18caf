"""`lbagent -c` on broken probe and service configurations: every error is
printed as FILE:LINE: message, on the line it is about, and the exit status
is 1 (nothing says `configuration OK`). The errors: an unknown probe type,
a key the probe's kind does not have, a timeout not below the interval
(given, and the 2s default against `interval = 1s`), a service naming a
probe that does not exist, a reaction out of range (`on_crit = 120%`), and
all of them in one file. One mistake is one error (issue 32), exactly, with
a did-you-mean for a misspelt key, section or probe type: a misspelt
required key is not also "required", a bad [probe NAME header is not also
"no [probe NAME] section" in the service naming it, an [agent] up_after
below down_after is not repeated for each [service] that inherits both.
Then every conf/examples/*.conf of the repository passes `-c` with
`configuration OK`."""

import glob
import os
import re
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

HEAD = "[agent]\nlisten = 127.0.0.1:9\n\n"

# name -> (config body after HEAD, [(accepted lines, words the message must contain)]).
# Lines are counted in the whole file (HEAD is 3 lines), 1-based.
CASES = {
    "unknown type": ("""\
[probe a]
type = bogus-kind
""", [({5}, ["bogus-kind"])]),
    "unknown key for the kind": ("""\
[probe t]
type = tcp
address = 127.0.0.1:1
url = http://127.0.0.1/
""", [({7}, ["url"])]),
    "timeout equal to interval": ("""\
[probe f]
type = file
path = /tmp
interval = 1s
timeout = 1s
""", [({4, 7, 8}, ["timeout"])]),
    "default timeout (2s) above interval": ("""\
[probe f]
type = file
path = /tmp
interval = 1s
""", [({4, 7}, ["timeout"])]),
    "service naming a missing probe": ("""\
[probe f]
type = file
path = /tmp

[service web]
probes = f, ghost-probe
""", [({8, 9}, ["ghost-probe"])]),
    "reaction out of range": ("""\
[probe f]
type = file
path = /tmp
on_crit = 120%
""", [({7}, ["120%"])]),
}

ALL = ("""\
[probe a]
type = bogus-kind

[probe t]
type = tcp
address = 127.0.0.1:1
url = http://127.0.0.1/

[probe f]
type = file
path = /tmp
interval = 1s
timeout = 1s

[probe r]
type = file
path = /tmp
on_crit = 120%

[service web]
probes = t, ghost-probe
""", [({5}, ["bogus-kind"]), ({10}, ["url"]), ({12, 15, 16}, ["timeout"]),
      ({21}, ["120%"]), ({23, 24}, ["ghost-probe"])])


# name -> (config body after HEAD, the exact [(line, message)] of its errors;
# a message ending in "..." is the start of one).
ONCE = {
    "a misspelt key of [peers]": ("""\
[peers]
intervall = 2s
""", [(5, "unknown key 'intervall' in [peers]; did you mean 'interval'?")]),
    "a misspelt section": ("""\
[servce web]
probes = f
""", [(4, "unknown section [servce web]; did you mean [service]? (known: "
          "[agent], [probe NAME], [service NAME], [http], [peers], [haproxy])")]),
    "a misspelt probe type": ("""\
[probe f]
type = fiel
path = /tmp
[service web]
probes = f
""", [(5, "type: unknown probe type 'fiel'; did you mean 'file'? (one of: http, "
          "...")]),
    "a misspelt required key": ("""\
[probe f]
type = file
pth = /tmp
timout = 1s
[service web]
probes = f
""", [(6, "unknown key 'pth' in [probe f]; did you mean 'path'?"),
      (7, "unknown key 'timout' in [probe f]; did you mean 'timeout'?")]),
    "a probe header without ']'": ("""\
[probe f
type = file
path = /tmp
[service web]
probes = f
""", [(4, "section header without ']'")]),
    "an [agent] window inherited by every service": ("""\
down_after = 1m
up_after = 10s
[probe f]
type = file
path = /tmp
[service web]
probes = f
[service api]
probes = f
""", [(5, "up_after 10s must be at least down_after 1m")]),
}


def check_once(name, body, expected):
    rc, out, path = h.check_config(HEAD + body, name=re.sub(r"\W+", "-", name))
    print(f"   {name}: exit {rc}\n" + "".join(f"      {line}\n" for line in out.splitlines()),
          end="", flush=True)
    rx = re.compile(re.escape(path) + r":(\d+): (.+)$")
    errors = [(int(m.group(1)), m.group(2)) for m in map(rx.match, out.splitlines())
              if m and not m.group(2).startswith("warning: ")]
    h.expect_equal(rc, 1, f"{name}: exit status of `lbagent -c` (output: {out!r})")
    errors = [(n, msg[:len(want) - 3] + "..." if want.endswith("...") else msg)
              for (n, msg), (_, want) in zip(errors, expected + [(0, "")] * len(errors))]
    h.expect_equal(errors, expected, f"{name}: the errors")


def check(name, body, expected):
    rc, out, path = h.check_config(HEAD + body, name=re.sub(r"\W+", "-", name))
    print(f"   {name}: exit {rc}\n" + "".join(f"      {line}\n" for line in out.splitlines()),
          end="", flush=True)
    lines = out.splitlines()
    errors = []
    rx = re.compile(re.escape(path) + r":(\d+): (.+)$")
    for line in lines:
        m = rx.match(line)
        if m:
            errors.append((int(m.group(1)), m.group(2)))
    h.expect_equal(rc, 1, f"{name}: exit status of `lbagent -c` (output: {out!r})")
    h.expect("configuration OK" not in out, f"{name}: says `configuration OK`: {out!r}")
    for accepted, words in expected:
        hit = [(n, msg) for n, msg in errors
               if n in accepted and all(w in msg for w in words)]
        h.expect(hit, f"{name}: expected `{path}:LINE: ...` with LINE in {sorted(accepted)} "
                 f"and a message naming {words}; the output was:\n{out}")
    h.expect(len(errors) >= len(expected),
             f"{name}: expected at least {len(expected)} FILE:LINE: errors, saw {errors}")


def main():
    h.require_kinds("tcp", "file")
    for name, (body, expected) in CASES.items():
        h.section(name)
        check(name, body, expected)
    h.section("every error at once")
    check("all at once", *ALL)
    for name, (body, expected) in ONCE.items():
        h.section(f"once: {name}")
        check_once(name, body, expected)

    h.section("a mistyped LBAGENT_MODE refuses to start")
    path = os.path.join(REPO, "conf", "lbagent.conf")
    for value, rc in (("of", 1), ("OFF", 0), ("auto", 0)):
        r = h.subprocess.run([h.lbagent_exe(), "-c", "-f", path],
                             stdin=h.subprocess.DEVNULL, stdout=h.subprocess.PIPE,
                             stderr=h.subprocess.STDOUT, timeout=30,
                             env=dict(os.environ, LBAGENT_MODE=value))
        out = r.stdout.decode(errors="replace")
        print(f"   LBAGENT_MODE={value}: exit {r.returncode}: {out.strip()}", flush=True)
        h.expect(r.returncode == rc, f"LBAGENT_MODE={value}: exit {r.returncode}, "
                 f"expected {rc}:\n{out}")
        if rc:
            h.expect("LBAGENT_MODE='of': expected auto, off or shadow" in out,
                     f"the error names the variable and its value:\n{out}")

    h.section("conf/examples/*.conf pass -c")
    examples = sorted(glob.glob(os.path.join(REPO, "conf", "examples", "*.conf")))
    h.expect(examples, f"no conf/examples/*.conf under {REPO}")
    for path in examples:
        r = h.subprocess.run([h.lbagent_exe(), "-c", "-f", path], stdin=h.subprocess.DEVNULL,
                             stdout=h.subprocess.PIPE, stderr=h.subprocess.STDOUT, timeout=30)
        out = r.stdout.decode(errors="replace")
        print(f"   {os.path.relpath(path, REPO)}: exit {r.returncode}: {out.strip()}", flush=True)
        h.expect(r.returncode == 0 and "configuration OK" in out,
                 f"{path}: `lbagent -c` exit {r.returncode}, expected 0 and "
                 f"`configuration OK`:\n{out}")


h.run(main)

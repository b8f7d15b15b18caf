"""Service names that would collide with the state directory: a service's
markers are in state_dir/NAME/, so `.`, `..`, names starting with a dot, the
markers' names (drain, maint, off) and the state file's (state.json,
state.json.tmp, ...) are refused, and so is `default`, the default
service's name in the metrics:

1. `lbagent -c` refuses `[service NAME]` for each, as FILE:LINE on the
   section's line, naming why; `[service drainer]` passes;
2. lbagentctl refuses `--service NAME` (and `status NAME`) for each with
   the same words, exit 2, and writes nothing: with a running lbagent,
   `lbagentctl drain on --service off` used to create state_dir/off/, which
   is the node-wide off marker (the whole node then answered `# lbagent
   automation off`); the node still answers `up` and state_dir holds no
   such entry. `default` is the exception there: it names the default
   service (`status default` shows it; `--service default` is refused as
   `-` is, the default service having only the node-wide markers)."""

import os
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

HEAD = "[agent]\nlisten = 127.0.0.1:9\n\n[probe p]\ntype = file\npath = /\n\n"
LINE = 8        # the [service NAME] line below HEAD
WHY = {
    ".": "'.' starts with '.'",
    "..": "'..' starts with '.'",
    ".web": "'.web' starts with '.'",
    "drain": "'drain' is a marker's name: state_dir/drain is the node-wide drain marker",
    "maint": "'maint' is a marker's name: state_dir/maint is the node-wide maint marker",
    "off": "'off' is a marker's name: state_dir/off is the node-wide off marker",
    "state.json": "'state.json' is the state file's name",
    "state.json.tmp": "'state.json.tmp' is the state file's name",
    "default": "'default' is the default service's name",
}
# What lbagentctl says of them, where it differs: "default" does name the
# default service there, which has only the node-wide markers.
CTL_WHY = {**WHY, "default": "the default service has only the node-wide markers"}


def ctl(*args):
    """lbagentctl's exit status and what it wrote, stdout then stderr."""
    rc, out, err = h.lbagentctl(*args, timeout_s=30)
    return rc, out + err


def markers_and_dirs(state_dir):
    """What an operator's command could write in state_dir: everything but
    the state file, which lbagent itself rewrites (through state.json.tmp)
    whenever it saves."""
    return sorted(n for n in os.listdir(state_dir)
                  if n not in ("state.json", "state.json.tmp"))


def main():
    h.require_kinds("file")
    h.section("lbagent -c refuses each name, on the section's line")
    for name, why in WHY.items():
        rc, out, path = h.check_config(HEAD + f"[service {name}]\nprobes = p\n",
                                       name="service-name")
        print(f"   [service {name}]: exit {rc}: {out.strip()}", flush=True)
        h.expect_equal(rc, 1, f"[service {name}]: exit status of lbagent -c ({out!r})")
        h.expect(f"{path}:{LINE}: [service {name}]: {why}" in out,
                 f"[service {name}]: want `{path}:{LINE}: [service {name}]: {why}...`:\n{out}")
    rc, out, _ = h.check_config(HEAD + "[service drainer]\nprobes = p\n", name="service-name")
    h.expect(rc == 0 and "configuration OK" in out, f"[service drainer] refused:\n{out}")

    h.section("lbagentctl refuses the same names, with the same words, and writes nothing")
    d = h.tmpdir()
    sock = os.path.join(d, "api.sock")
    lb = h.Lbagent({"agent": {"reply_reasons": "yes"},
                    "http": {"listen": f"unix:{sock}"},
                    "probe p": {"type": "file", "path": "/", "interval": "100ms",
                                "timeout": "90ms"},
                    "service web": {"probes": "p"}})
    h.wait_reply(lb, b"up\n", "up at start")
    before = markers_and_dirs(lb.state_dir)
    for name, why in CTL_WHY.items():
        for args in (["drain", "on", "--service", name], ["maint", "on", "--service", name],
                     ["mode", "off", "--service", name], ["status", name]):
            if args == ["status", "default"]:
                continue        # below: the default service's status
            rc, out = ctl("-f", lb.config_path, "-t", "2", *args)
            print(f"   lbagentctl {' '.join(args)}: exit {rc}: {out.strip()}", flush=True)
            h.expect_equal(rc, 2, f"lbagentctl {' '.join(args)}: exit status ({out!r})")
            h.expect(why in out, f"lbagentctl {' '.join(args)}: want {why!r}:\n{out}")
    h.expect_equal(markers_and_dirs(lb.state_dir), before,
                   "state_dir after the refused commands")
    rc, out = ctl("-f", lb.config_path, "-t", "10", "status", "default")
    h.expect(rc == 0 and "service (default): up" in out and "service web" not in out,
             f"lbagentctl status default: the default service alone:\n{out}")
    h.hold_for(lb.ask, 1.0, "the node still answers up (no node-wide marker made)",
               ok=lambda r: r == b"up\n")
    rc, out = ctl("-f", lb.config_path, "-t", "10", "drain", "on", "--service", "web")
    h.expect(rc == 0, f"lbagentctl drain on --service web: exit {rc}:\n{out}")
    h.expect(os.path.isfile(os.path.join(lb.state_dir, "web", "drain")),
             "a service's marker in state_dir/web/")


h.run(main)

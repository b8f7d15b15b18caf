"""Monitoring that ships: the Prometheus alerting rules, the Grafana
dashboard and lbagentctl's bash completion, checked with the tools that
use them and against a real lbagent.

- `promtool check rules` accepts packaging/prometheus/lbagent-alerts.yml
  and prints nothing but its success line (no lint message);
- `promtool test rules` passes tests/monitoring/lbagent-alerts.test.yml,
  which has cases (input series, expected alerts, and series that must
  not fire) for every alert the rules file defines;
- a real lbagent with two services, a windowed tcp probe and a drain
  marker with an end (`lbagentctl drain on --for 1h`): its /metrics
  passes `promtool check metrics` with nothing to say, and every metric
  name the rules and the dashboard's queries use is in it (`up`, from
  Prometheus itself, aside);
- the dashboard is JSON Grafana imports: a current schemaVersion, a
  datasource variable every panel and query uses, unique panel ids, and
  every query is PromQL that promtool parses (its Grafana variables
  replaced);
- the completion, sourced in bash: the commands, the options of a
  command, the words after maint/drain/mode, and the services of the
  configuration given with -f (its [service NAME] sections) after
  status, why and --service."""

import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
import harness as h  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RULES = os.path.join(ROOT, "packaging", "prometheus", "lbagent-alerts.yml")
RULES_TEST = os.path.join(ROOT, "tests", "monitoring", "lbagent-alerts.test.yml")
DASHBOARD = os.path.join(ROOT, "packaging", "grafana", "lbagent-dashboard.json")
COMPLETION = os.path.join(ROOT, "packaging", "bash-completion", "lbagentctl")
# Grafana's variables, as a query would see them.
GRAFANA_VARS = {"$__rate_interval": "5m", "$__interval": "1m", "$job": ".+",
                "$instance": ".+", "$service": ".+"}
# Metric names of Prometheus itself the rules and dashboard may use.
NOT_LBAGENT = {"up"}
# PromQL words that look like metric names.
PROMQL_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and",
                "or", "unless", "bool", "offset", "max", "min", "sum", "avg", "count",
                "rate", "increase", "absent", "time", "label_values", "label_replace",
                "histogram_quantile", "inf", "nan"}


def promtool():
    p = shutil.which("promtool")
    if p is None:
        raise h.TestFailure("promtool not found: scripts/deps test installs prometheus")
    return p


def run(argv, stdin=None):
    r = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       timeout=120)
    return r.returncode, r.stdout.decode(errors="replace")


def metric_names(expr):
    """The metric names a PromQL expression selects: identifiers outside
    quotes, braces and brackets that are not functions or keywords."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    s = re.sub(r"\{[^}]*\}", "{}", s)
    s = re.sub(r"\[[^]]*\]", "[]", s)
    s = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", s)
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", s):
        w = m.group(0)
        rest = s[m.end():].lstrip()
        if w.lower() in PROMQL_WORDS or rest.startswith("("):
            continue
        # A number's exponent or a duration's unit is no name.
        if m.start() > 0 and s[m.start() - 1].isdigit():
            continue
        names.add(w)
    return names


def rules_exprs():
    import yaml
    with open(RULES) as f:
        doc = yaml.safe_load(f)
    return [(r["alert"], r["expr"]) for g in doc["groups"] for r in g["rules"]]


def dashboard_exprs(dash):
    """(where, expr) of every query: panels (rows' too) and variables."""
    out = []

    def panels(ps):
        for p in ps:
            for t in p.get("targets", []):
                out.append((f"panel {p['title']!r}", t["expr"]))
            panels(p.get("panels", []))
    panels(dash["panels"])
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
            m = re.fullmatch(r"label_values\((.*),\s*\w+\)", q)
            h.expect(m is not None, f"variable {v['name']}: {q!r} is not label_values(...)")
            out.append((f"variable {v['name']}", m.group(1)))
    return out


def grafana_to_promql(expr):
    for k in sorted(GRAFANA_VARS, key=len, reverse=True):
        expr = expr.replace(k, GRAFANA_VARS[k])
    return expr


def check_rules():
    tool = promtool()
    h.section("promtool check rules: the shipped rules, no lint message")
    rc, out = run([tool, "check", "rules", RULES])
    alerts = [a for a, _ in rules_exprs()]
    want = f"Checking {RULES}\n  SUCCESS: {len(alerts)} rules found\n"
    h.expect(rc == 0 and out.strip() == want.strip(),
             f"promtool check rules (exit {rc}):\n{out}")
    for name in ("LbagentDown", "LbagentNotScraped", "LbagentHeldInByGuard",
                 "LbagentGuardLatched", "LbagentAutomationOffTooLong",
                 "LbagentShadowTooLong", "LbagentMarkerWithoutEnd",
                 "LbagentProbeFailing", "LbagentFlapDamping",
                 "LbagentReloadFailed", "LbagentUnknownServiceName"):
        h.expect(name in alerts, f"the rules have {name}")

    h.section("promtool test rules: every alert's cases")
    with open(RULES_TEST) as f:
        tested = set(re.findall(r"^\s*alertname:\s*(\S+)\s*$", f.read(), re.M))
    h.expect_equal(sorted(set(alerts) - tested), [], "alerts the unit tests leave out")
    rc, out = run([tool, "test", "rules", RULES_TEST])
    h.expect(rc == 0 and "SUCCESS" in out and "FAILED" not in out,
             f"promtool test rules (exit {rc}):\n{out}")
    return alerts


def usage_commands():
    """lbagentctl's usage as {command: the words that may follow it}: for
    `maint on|off [...]`, {"maint": {"on", "off"}}; None when any may."""
    rc, out, err = h.lbagentctl("-h", timeout_s=30)
    h.expect(rc == 0, f"lbagentctl -h exits 0 ({rc}): {err}")
    cmds = {}
    for line in out.splitlines():
        words = line.split()
        if "lbagentctl" not in words:
            continue
        words = words[words.index("lbagentctl") + 1:]
        if not words or words[0].startswith("-"):
            continue
        nxt = words[1] if len(words) > 1 else ""
        cmds[words[0]] = set(nxt.split("|")) if "|" in nxt else None
    return cmds


def alert_commands():
    """(alert, command) for every `lbagentctl ...` an alert's text suggests,
    its templates filled in as they would be for each label value the
    expression lets through (marker=~"a|b": once for a, once for b)."""
    import yaml
    with open(RULES) as f:
        doc = yaml.safe_load(f)
    out = []
    for g in doc["groups"]:
        for r in g["rules"]:
            text = " ".join(r.get("annotations", {}).values())
            m = re.search(r'marker=~"([^"]+)"', r["expr"])
            markers = m.group(1).split("|") if m else ["maint"]
            for marker in markers:
                filled = re.sub(r"\{\{\s*\$labels\.marker\s*\}\}", marker, text)
                filled = re.sub(r"\{\{\s*\$labels\.service\s*\}\}", "web", filled)
                for cmd in re.findall(r"`(lbagentctl[^`]*)`", filled):
                    out.append((r["alert"], cmd))
    return out


def check_alert_commands():
    h.section("every lbagentctl command an alert suggests exists")
    cmds = usage_commands()
    h.expect({"status", "why", "maint", "drain", "mode", "check", "reload"} <= set(cmds),
             f"lbagentctl's usage lists its commands: {sorted(cmds)}")
    suggested = alert_commands()
    h.expect(len(suggested) >= 8, f"the alerts suggest commands: {suggested}")
    for alert, cmd in suggested:
        words = cmd.split()[1:]
        h.expect(words and words[0] in cmds,
                 f"{alert} suggests `{cmd}`: no such command in lbagentctl -h")
        allowed = cmds[words[0]]
        if allowed is not None:
            h.expect(len(words) > 1 and words[1] in allowed,
                     f"{alert} suggests `{cmd}`: {words[0]} takes {sorted(allowed)}")


def check_dashboard_form(dash):
    h.section("the dashboard: schema, datasource variable, panels")
    h.expect(isinstance(dash.get("schemaVersion"), int) and dash["schemaVersion"] >= 36,
             f"a current schemaVersion: {dash.get('schemaVersion')}")
    ds = [v for v in dash["templating"]["list"] if v["type"] == "datasource"]
    h.expect(len(ds) == 1 and ds[0]["query"] == "prometheus",
             f"one Prometheus datasource variable: {ds}")
    ref = {"type": "prometheus", "uid": "${" + ds[0]["name"] + "}"}
    ids = []

    def walk(ps):
        for p in ps:
            ids.append(p["id"])
            if p["type"] != "row":
                h.expect_equal(p.get("datasource"), ref, f"panel {p['title']!r} datasource")
                h.expect(p.get("targets"), f"panel {p['title']!r} has queries")
                for t in p["targets"]:
                    h.expect_equal(t.get("datasource"), ref,
                                   f"panel {p['title']!r} query {t['refId']} datasource")
            walk(p.get("panels", []))
    walk(dash["panels"])
    h.expect(len(ids) == len(set(ids)), f"panel ids unique: {ids}")
    for v in dash["templating"]["list"]:
        if v["type"] == "query":
            h.expect_equal(v.get("datasource"), ref, f"variable {v['name']} datasource")

    h.section("every dashboard query is PromQL promtool parses")
    exprs = dashboard_exprs(dash)
    d = h.tmpdir()
    path = os.path.join(d, "dashboard-queries.yml")
    with open(path, "w") as f:
        f.write("groups:\n  - name: dashboard\n    rules:\n")
        for i, (_, e) in enumerate(exprs):
            f.write(f"      - record: dashboard:query{i}\n        expr: {json.dumps(grafana_to_promql(e))}\n")
    rc, out = run([promtool(), "check", "rules", path])
    h.expect(rc == 0, f"promtool on the dashboard's queries (exit {rc}):\n{out}\n" +
             "\n".join(f"{i}: {w}: {e}" for i, (w, e) in enumerate(exprs)))
    return exprs


def check_live(dash_exprs):
    h.require_kinds("tcp")
    stub = h.backend_stub()
    d = h.tmpdir()
    sock = "unix:" + os.path.join(d, "api.sock")
    port = h.free_port()
    lb = h.Lbagent(h.ini_text({
        "agent": {"listen": "127.0.0.1:{port}", "state_dir": "{state_dir}", **h.IMMEDIATE},
        "http": {"listen": f"127.0.0.1:{port}, {sock}"},
        "probe conn": {"type": "tcp", "address": f"127.0.0.1:{stub.port}",
                       "interval": "200ms", "timeout": "150ms", "window": "10s",
                       "samples_per_run": 1, "min_samples": 1},
        "probe runs": {"type": "exec", "command": "/bin/true", "interval": "200ms",
                       "timeout": "150ms"},
        "service web": {"probes": "conn, runs"},
        "service api": {"probes": "runs"},
    }))

    h.section("lbagentctl drain on --for 1h: a marker with an end")
    rc, out, err = h.lbagentctl("-f", lb.config_path, "drain", "on", "--for", "1h",
                                "--service", "web", "--reason", "monitoring test")
    h.expect(rc == 0, f"lbagentctl drain on --for 1h: exit {rc}\n{out}\n{err}")

    def metrics():
        code, _, body = h.http_request(port, "/metrics")
        h.expect_equal(code, 200, "/metrics")
        return body.decode()

    def complete(text):
        return all(n in text for n in ('lbagent_probe_latency_seconds{', 'lbagent_probe_error_ratio{',
                                       'lbagent_marker_expiry_timestamp_seconds{',
                                       'lbagent_probe_duration_seconds{'))
    text = h.wait_until(metrics, h.probe_bound_s(200, 150) + h.marker_bound_s(),
                        "window figures and the marker's end in /metrics", ok=complete,
                        describe=lambda t: t and t[-600:])

    h.section("promtool check metrics: nothing to say")
    rc, out = run([promtool(), "check", "metrics"], stdin=text.encode())
    h.expect(rc == 0 and out.strip() == "", f"promtool check metrics (exit {rc}):\n{out}\n"
             f"--- metrics ---\n{text}")

    names = set()
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]", line)
        if m:
            names.add(m.group(1))
    h.section("every metric the rules use is in /metrics")
    for alert, expr in rules_exprs():
        for n in metric_names(expr) - NOT_LBAGENT:
            h.expect(n in names, f"{alert}: {n} is not in lbagent's /metrics")
    h.section("every metric the dashboard uses is in /metrics")
    used = set()
    for where, expr in dash_exprs:
        for n in metric_names(grafana_to_promql(expr)) - NOT_LBAGENT:
            used.add(n)
            h.expect(n in names, f"{where}: {n} is not in lbagent's /metrics")
    for want in ("lbagent_state", "lbagent_weight_ratio", "lbagent_probe_status",
                 "lbagent_probe_latency_seconds", "lbagent_probe_error_ratio",
                 "lbagent_replies_total", "lbagent_transitions_total", "lbagent_marker",
                 "lbagent_shadow", "lbagent_shadow_reply"):
        h.expect(want in used, f"the dashboard shows {want}")
    return lb


def check_completion(conf):
    h.section("bash completion: commands, options, services of -f")

    def complete(*words):
        script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); '
                  '_lbagentctl; printf "%s\\n" "${COMPREPLY[@]}"')
        r = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash",
                            COMPLETION, "lbagentctl", *words],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        h.expect(r.returncode == 0 and r.stderr == b"",
                 f"completion of {words}: exit {r.returncode}, stderr {r.stderr!r}")
        return sorted(w for w in r.stdout.decode().split("\n") if w)

    cases = [
        ((""), ["check", "drain", "fleet", "maint", "mode", "reload", "status", "why"]),
        (("d",), ["drain"]),
        (("-f", conf, "fleet", "--"), ["--json"]),
        (("-f", conf, "fleet", "a"), ["api"]),
        (("-",), ["-V", "-f", "-h", "-s", "-t"]),
        (("-f", conf, "status", ""), ["-", "api", "web"]),
        (("-f", conf, "status", "--"), ["--json", "--short"]),
        (("-f", conf, "why", "w"), ["web"]),
        (("drain", ""), ["off", "on"]),
        (("-f", conf, "maint", "on", "--"), ["--for", "--force", "--reason", "--service",
                                             "--until", "--wait"]),
        (("drain", "on", "--wait", "--"), ["--for", "--force", "--reason", "--service",
                                           "--timeout", "--until", "--wait"]),
        (("drain", "off", "--"), ["--service"]),
        (("-f", conf, "maint", "off", "--service", ""), ["api", "web"]),
        (("drain", "on", "--wait", "--timeout", ""), []),
        (("-f", conf, "drain", "on", "--service", ""), ["api", "web"]),
        (("-f", conf, "mode", ""), ["auto", "off"]),
        (("-f", conf, "mode", "off", "--service", "a"), ["api"]),
        (("drain", "on", "--for", ""), []),
    ]
    for words, want in cases:
        words = (words,) if isinstance(words, str) else words
        h.expect_equal(complete(*words), want, f"lbagentctl {' '.join(words)}<TAB>")
    # Without -f, the default configuration: no services when it is absent
    # here, and never an error.
    complete("status", "")


def main():
    check_rules()
    check_alert_commands()
    with open(DASHBOARD) as f:
        dash = json.load(f)
    exprs = check_dashboard_form(dash)
    lb = check_live(exprs)
    check_completion(lb.config_path)


if __name__ == "__main__":
    h.run(main)

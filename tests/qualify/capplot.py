"""The capacity group's figures over time, its plot (SVG written by hand)
and its table in report.md (tests/qualify/capacity.py)."""

import html

BIN_S = 1.0
COLORS = {"n1": "#1f77b4", "n2": "#ff7f0e", "n3": "#2ca02c"}


def _interp(samples, key, t):
    """samples: [(t, counters)] in time order; key's value at t, linear
    between the two around it (None outside)."""
    prev = None
    for ts, c in samples:
        if ts >= t:
            if prev is None:
                return None if ts - t > BIN_S else c[key]
            a, ca = prev
            f = (t - a) / (ts - a) if ts > a else 1.0
            return ca[key] + f * (c[key] - ca[key])
        prev = (ts, c)
    return None


def series(dep, sampler, t0, end_s):
    """Per BIN_S from the client's start: each node's utilization (busy
    worker-seconds over the bin), served rate and share, in flight (max of
    the app's), and per load balancer its weight, weight share, and the
    worst scur / slim (in flight against the limit) seen in the bin."""
    apps = {n.name: [(t - t0, c) for t, name, c in dep.app_samples if name == n.name]
            for n in dep.nodes}
    workers = {n.name: None for n in dep.nodes}
    for name, s in apps.items():
        if s:
            workers[name] = s[-1][1]["workers"]
    lbrows = [(t - t0, lb, n, r) for t, lb, n, r in dep.lb_samples]
    out = []
    t = 0.0
    while t + BIN_S <= end_s + 1e-9:
        row = {"t": round(t, 2), "util": {}, "served": {}, "inflight": {},
               "weight": {}, "wshare": {}, "ratio": {}}
        for name, s in apps.items():
            b0, b1 = _interp(s, "busy_s", t), _interp(s, "busy_s", t + BIN_S)
            c0, c1 = _interp(s, "completed", t), _interp(s, "completed", t + BIN_S)
            row["util"][name] = None if b0 is None or b1 is None else \
                round(min(1.0, (b1 - b0) / (workers[name] * BIN_S)), 4)
            row["served"][name] = None if c0 is None or c1 is None else \
                round((c1 - c0) / BIN_S, 2)
            fl = [c["inflight"] for ts, c in s if t <= ts < t + BIN_S]
            row["inflight"][name] = max(fl) if fl else None
        tot = sum(v for v in row["served"].values() if v)
        row["share"] = {n: (round(v / tot, 4) if tot and v is not None else None)
                        for n, v in row["served"].items()}
        for ts, lb, n, r in lbrows:
            if t <= ts < t + BIN_S:
                row["weight"].setdefault(lb, {})[n] = r["weight"]
                if r["slim"] > 0:
                    k = row["ratio"].setdefault(lb, {})
                    k[n] = max(k.get(n, 0.0), r["scur"] / r["slim"])
        for lb, ws in row["weight"].items():
            tw = sum(ws.values())
            if tw > 0 and len(ws) == len(dep.nodes):
                row["wshare"][lb] = {n: round(w / tw, 4) for n, w in ws.items()}
        out.append(row)
        t += BIN_S
    return out


def mean_over(series, key, a, b):
    """{node: mean of key over the bins in [a, b)}."""
    acc = {}
    for row in series:
        if a <= row["t"] < b:
            for n, v in row[key].items():
                if v is not None:
                    acc.setdefault(n, []).append(v)
    nodes = set().union(*(row[key].keys() for row in series)) if series else set()
    return {n: (sum(acc[n]) / len(acc[n]) if acc.get(n) else None) for n in sorted(nodes)}


def inflight_vs_limit(series, node, a, b):
    vals = [r["ratio"][lb][node] for r in series if a <= r["t"] < b
            for lb in r["ratio"] if node in r["ratio"][lb]]
    return round(max(vals), 3) if vals else None


def _weights(series, node, a, b):
    return [(r["t"], [r["weight"][lb][node] for lb in sorted(r["weight"])
                      if node in r["weight"][lb]]) for r in series if a <= r["t"] < b]


def weight_back_at(series, node, weight, a, b):
    for t, ws in _weights(series, node, a, b):
        if ws and all(abs(w - weight) <= 2 for w in ws):
            return round(t + BIN_S - a, 1)
    return None


def weight_min(series, node, a, b):
    vals = [w for _, ws in _weights(series, node, a, b) for w in ws]
    return min(vals) if vals else None


def weight_moves(series, node, a, b):
    moves, last = 0, None
    for _, ws in _weights(series, node, a, b):
        if not ws:
            continue
        if last is not None and abs(ws[0] - last) > 2:
            moves += 1
        last = ws[0]
    return moves


# ------------------------------------------------------------------- SVG

W, PH, ML, MT, GAP = 420, 130, 40, 24, 36


def _panel(x0, y0, series, end, key, title, events, weight=False):
    out = [f'<rect x="{x0}" y="{y0}" width="{W}" height="{PH}" fill="none" stroke="#999"/>',
           f'<text x="{x0}" y="{y0 - 6}" font-size="11">{html.escape(title)}</text>']
    for frac in (0.0, 0.5, 1.0):
        y = y0 + PH - frac * PH
        out.append(f'<text x="{x0 - 4}" y="{y + 4}" font-size="9" text-anchor="end">'
                   f'{frac:g}</text>')
    for s in range(0, int(end) + 1, max(5, int(end / 6) // 5 * 5 or 5)):
        x = x0 + s / end * W if end else x0
        out.append(f'<text x="{x}" y="{y0 + PH + 11}" font-size="9" '
                   f'text-anchor="middle">{s}s</text>')
    for at in events:
        x = x0 + at / end * W
        out.append(f'<line x1="{x}" y1="{y0}" x2="{x}" y2="{y0 + PH}" stroke="#c00" '
                   f'stroke-dasharray="3,3"/>')

    def line(points, color, dash=""):
        pts = " ".join(f"{x0 + (t + BIN_S / 2) / end * W:.1f},{y0 + PH - min(v, 1.0) * PH:.1f}"
                       for t, v in points if v is not None)
        if pts:
            out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5" '
                       f'{dash} points="{pts}"/>')

    for n, c in COLORS.items():
        line([(r["t"], r[key].get(n)) for r in series], c)
        if weight:
            line([(r["t"], (r["wshare"].get("lb1") or {}).get(n)) for r in series], c,
                 'stroke-dasharray="5,3"')
    return out


def write_svg(path, case, ways):
    """Per way a row: served share (solid) and weight share on lb1
    (dashed); utilization. Red dashes: the case's events."""
    rows = [(name, w) for name, w in ways.items() if w.get("series")]
    end = max([w.get("end_s", 0) for _, w in rows] or [0])
    if not rows or not end:
        return None
    events = sorted({at for at, _, _ in case.events()} |
                    {sum(s for s, _ in case.plan()[:k]) for k in range(1, len(case.plan()))})
    width = ML + 2 * W + GAP + 20
    height = MT + len(rows) * (PH + GAP) + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{ML}" y="14" font-size="12">{html.escape(case.name)}: '
           + " ".join(f'<tspan fill="{c}">&#9632; {n}</tspan>' for n, c in COLORS.items())
           + ' (share: solid served, dashed weight on lb1; red: events)</text>']
    for i, (name, w) in enumerate(rows):
        y0 = MT + 14 + i * (PH + GAP)
        out += _panel(ML, y0, w["series"], end, "share", f"{name}: share of requests",
                      events, weight=True)
        out += _panel(ML + W + GAP, y0, w["series"], end, "util",
                      f"{name}: utilization", events)
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    return path


# ---------------------------------------------------------------- report

ROWS = [("max / mean utilization", "max_over_mean", "{}"),
        ("max node utilization", "util_max", "{}"),
        ("mean node utilization", "util_mean", "{}"),
        ("p99", "p99_ms", "{} ms"),
        ("p50", "p50_ms", "{} ms"),
        ("goodput (200 within 1 s)", "goodput", "{:.1%}"),
        ("failed / requests", None, None),
        ("settle time", "settle_s", "{} s"),
        ("max weight move a minute", "move_per_min", "{:.1%}"),
        ("max weight off ideal after settling", "weight_dev_after_settle", "{:.1%}"),
        ("p99 before the drop (unloaded)", "unloaded_p99_ms", "{} ms"),
        ("in flight on n1 / its limit", "inflight_vs_limit", "{}"),
        ("swing from ideal after settling", "swing", "{:.1%}")]


def report_lines(r):
    cap = r["capacity"]
    ways = cap["ways"]
    table = cap["table"]
    out = ["", f"Load plan (seconds, requests a second): {cap['plan']}; events: "
           f"{cap['events'] or 'none'}; times at scale {cap['scale']:.3g} of the full tier's.",
           "", "| figure | " + " | ".join(ways) + " |", "|---|" + "---|" * len(ways)]
    for label, key, fmt in ROWS:
        cells = []
        for w in ways:
            row = table.get(w, {})
            if "rejected" in row:
                cells.append("rejected")
            elif key is None:
                cells.append(f"{row.get('failed', '-')} / {row.get('requests', '-')}")
            else:
                v = row.get(key)
                cells.append("-" if v is None else fmt.format(v))
        if key is None or any(c not in ("-", "rejected") for c in cells):
            out.append(f"| {label} | " + " | ".join(cells) + " |")
    for w in ways:
        if "rejected" in table.get(w, {}):
            out.append(f"\n{w} way: **{table[w]['rejected']}**")
    out += ["", "The window: from the settle bound (the case's last capacity change plus "
            "the scaled 30 s) to the end; settle time and moves from the change."]
    if cap.get("plot"):
        out += ["", f"![{r['name']}]({cap['plot']}) ([plot]({cap['plot']}))"]
    return out

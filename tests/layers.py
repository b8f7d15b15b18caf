#!/usr/bin/python3
"""tests/layers.py: the layers stay layers, and docs/architecture.md stays
true to the tree.

- src/core (and include/lbagent/core) includes only core headers and never
  libevent or libcurl (the build refuses those too: see meson.build), and
  its code neither logs, nor reads a clock, nor does I/O: times come in as
  now_ms/wall_ms and what to log goes back to the caller as notes;
- every include points down: core <- sys <- probes <- daemon <- ctl, a
  layer including its own headers and those below it (sys is the
  operating system without policy: log, clock, workers, the curl loop,
  sockets, atomic files, slabs; probes never reach the daemon);
- within a layer checked for it (CIRCLE_FREE), the modules' includes
  form no circle: a module is a .c file and its headers (x.c,
  include/lbagent/LAYER/x.h, a private x.h or x_impl.h beside x.c), and
  no module reaches its own header through another module's, directly
  (x includes y.h, y includes x.h) or round a longer cycle;
- the core library (argv[1], when given) needs nothing beyond itself but
  jansson and libc's memory, string, number and time-formatting functions;
- every source file under src/ is named in docs/architecture.md, and every
  src/ or include/ path the document names exists.
Exits 1 with one line per violation."""
import os
import re
import subprocess
import sys

root = os.environ.get("SOURCE_ROOT") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")
os.chdir(root)
bad = []
inc = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')

# From the bottom: core <- sys <- probes <- daemon <- ctl. A layer includes
# its own headers and those of the layers below it, never above.
ORDER = ("core", "sys", "probes", "daemon", "ctl")
ALLOWED = {layer: tuple(f"lbagent/{below}/" for below in ORDER[:i + 1])
           for i, layer in enumerate(ORDER)}


def layer_of(path):
    parts = path.split("/")
    if parts[0] == "src":
        return parts[1]
    if parts[:2] == ["include", "lbagent"]:
        return parts[2]
    return None


def sources():
    for top in ("src", "include/lbagent"):
        for d, _, fs in os.walk(top):
            for f in sorted(fs):
                if f.endswith((".c", ".h")):
                    yield os.path.join(d, f)


files = list(sources())
for path in files:
    layer = layer_of(path)
    if layer not in ALLOWED:
        bad.append(f"{path}: not in a layer (src/core, src/sys, "
                   "src/probes, src/daemon, src/ctl)")
        continue
    for n, line in enumerate(open(path), 1):
        m = inc.match(line)
        if not m:
            continue
        kind, name = m.groups()
        if kind == "<":
            if layer == "core" and (name.split("/")[0] in ("event2", "curl")
                                    or name in ("event.h", "evhttp.h",
                                                "evutil.h", "evdns.h",
                                                "evrpc.h")):
                bad.append(f"{path}:{n}: core includes <{name}>")
            continue
        if not name.startswith("lbagent/"):
            if not os.path.exists(os.path.join(os.path.dirname(path), name)):
                bad.append(f"{path}:{n}: \"{name}\" is not beside it")
            continue
        if not name.startswith(ALLOWED[layer]):
            bad.append(f"{path}:{n}: the {layer} layer includes {name}")

def module_of(path):
    """x for src/LAYER/x.c, include/lbagent/LAYER/x.h and the private
    headers beside the sources, src/LAYER/x.h and src/LAYER/x_impl.h (the
    module's own layout, shared by its rooms)."""
    name = os.path.splitext(os.path.basename(path))[0]
    return name[:-len("_impl")] if name.endswith("_impl") else name


def include_cycles(layer):
    """The circles among the modules of one layer, as lists of
    (module, file:line, included header), each starting at the module
    with the least name; one circle per strongly connected set."""
    edges = {}	# module -> {module: (file:line, name)}, the first seen
    for path in files:
        if layer_of(path) != layer:
            continue
        src = module_of(path)
        edges.setdefault(src, {})
        for n, line in enumerate(open(path), 1):
            m = inc.match(line)
            if not m or m.group(1) != '"':
                continue
            name = m.group(2)
            if name.startswith("lbagent/"):
                if not name.startswith(f"lbagent/{layer}/"):
                    continue
            elif not os.path.exists(os.path.join(os.path.dirname(path),
                                                 name)):
                continue
            dst = module_of(name)
            if dst != src:
                edges[src].setdefault(dst, (f"{path}:{n}", name))
    # Tarjan's strongly connected components, without recursion.
    index, low, on, stack, comps, count = {}, {}, set(), [], [], 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, {}))))]
        index[start] = low[start] = count
        count += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = count
                    count += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, {})))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(comp)
    cycles = []
    for comp in sorted(comps, key=min):
        # The shortest way from the least module back to itself inside
        # the component (breadth first).
        first = min(comp)
        prev, queue, found = {first: None}, [first], None
        while queue and found is None:
            nxt = []
            for v in queue:
                for w in sorted(edges.get(v, {})):
                    if w not in comp:
                        continue
                    if w == first:
                        found = v
                        break
                    if w not in prev:
                        prev[w] = v
                        nxt.append(w)
                if found is not None:
                    break
            queue = nxt
        chain, v = [], found
        while v is not None:
            chain.append(v)
            v = prev[v]
        chain.reverse()
        cycles.append([(v, *edges[v][chain[i + 1] if i + 1 < len(chain)
                                     else first])
                       for i, v in enumerate(chain)])
    return cycles


# The layers whose modules form no include circle (the others are on
# their way there).
CIRCLE_FREE = ("core", "sys", "probes", "daemon", "ctl")
for layer in CIRCLE_FREE:
    for cycle in include_cycles(layer):
        steps = " -> ".join(f"{mod} ({where} includes {name})"
                            for mod, where, name in cycle)
        bad.append(f"src/{layer}: include circle: {steps} -> {cycle[0][0]}")


# Calls the core may not make, outside comments and strings.
FORBIDDEN_CALL = re.compile(
    r"(?<![\w.>])(log_[a-z_]+|fatal|clock_[a-z_]+|time|gettimeofday|"
    r"open|openat|fopen|fdopen|read|write|pread|pwrite|close|socket|"
    r"connect|accept|send|recv|fork|exec[lv]p?e?|system|popen|unlink|"
    r"rename|mkdir|opendir|stat|fstat|lstat|fsync|getenv)\s*\(")


def code_only(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


for path in files:
    if layer_of(path) != "core":
        continue
    for n, line in enumerate(code_only(open(path).read()).split("\n"), 1):
        for m in FORBIDDEN_CALL.finditer(line):
            bad.append(f"{path}:{n}: the core calls {m.group(1)}()")

# What the core library may take from outside itself: jansson, and libc's
# pure functions (memory, strings, numbers, formatting a given time).
LIBC_PURE = set("""
    __ctype_b_loc __ctype_tolower_loc __ctype_toupper_loc __errno_location
    __stack_chk_fail __assert_fail abort asprintf vasprintf calloc free
    malloc realloc memchr memcmp memcpy memmem memmove memset qsort bsearch
    snprintf vsnprintf strcasecmp strncasecmp strchr strcmp strcspn strdup
    strndup strftime strlen strnlen strncmp strrchr strspn strstr strtod
    strtol strtoll strtoul strtoull localtime_r gmtime_r timegm tolower
    toupper isalnum isalpha isdigit isspace isxdigit inet_pton inet_ntop
    _GLOBAL_OFFSET_TABLE_""".split())
# And libm's (meson.build links the core with it): the capacity model's
# averages and the concurrency limit's square root.
LIBC_PURE |= set("""
    exp exp2 log log2 pow sqrt fabs floor ceil round lround llround trunc
    fmin fmax fmod""".split())
if len(sys.argv) > 1:
    lib = sys.argv[1]

    def syms(*args):
        out = subprocess.run(["nm", *args, lib], capture_output=True,
                             text=True, check=True).stdout
        return {line.split()[-1] for line in out.splitlines()
                if line.strip() and not line.endswith(":")}
    defined = syms("-g", "--defined-only")
    for s in sorted(syms("-u") - defined):
        base = s.split("@")[0]
        # _FORTIFY_SOURCE's checked forms (__snprintf_chk) are the same call.
        m = re.fullmatch(r"__(\w+)_chk", base)
        if m and m.group(1) in LIBC_PURE:
            continue
        # glibc 2.38 (Debian 13) names the C23 forms of strtol and the like,
        # which _GNU_SOURCE selects, __isoc23_strtol: the same call.
        m = re.fullmatch(r"__isoc23_(\w+)", base)
        if m and m.group(1) in LIBC_PURE:
            continue
        if not (base.startswith("json_") or base in LIBC_PURE or
                base.startswith(("__asan", "__ubsan", "__sanitizer",
                                 "__sancov", "__lsan"))):
            bad.append(f"{lib}: the core needs {s} from outside")

arch = "docs/architecture.md"
text = open(arch).read() if os.path.exists(arch) else ""
if not text:
    bad.append(f"{arch}: missing")
for path in files:
    if path.startswith("src/") and path.endswith(".c"):
        rel = path[len("src/"):]
        if rel not in text:
            bad.append(f"{arch}: does not name {rel}")
for m in re.finditer(r"\b((?:src|include)/[A-Za-z0-9_./-]+\.[ch])\b", text):
    if not os.path.exists(m.group(1)):
        bad.append(f"{arch}: names {m.group(1)}, which does not exist")
for m in re.finditer(r"`((?:core|daemon|probes|ctl)/[A-Za-z0-9_-]+\.[ch])`", text):
    if not os.path.exists("src/" + m.group(1)):
        bad.append(f"{arch}: names {m.group(1)}, which is not under src/")

for b in bad:
    print(b)
sys.exit(1 if bad else 0)

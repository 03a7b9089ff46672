#!/usr/bin/env python3
"""run_docs.py -- the documented commands are tests (issue 38).

Every code block (fenced or indented) of the Markdown files given must be preceded by a marker,
an HTML comment that says what the block is; a block without one fails, so new docs cannot
escape. The marker is one comment, its first line "<!-- doctest: KIND [ARG]", then optional
"key: value" lines, ending with "-->" (blank lines may separate it from its block):

    <!-- doctest: sh
      sub: --epochs 30 => --epochs 1      (literal replacement: a shortened run; it must match;
                                           "quote" a side to keep its edge spaces)
      expect: 84\\.7                      (a regular expression the output must match)
      reject: warning                     (one it must not match)
      near: sigma = 3.85422 +- 5e-6       (a number after the label, within the tolerance: a
                                           number the text rounds)
      full: DP-SGD +0\\.8476              (checked only with DOCS_FULL=1, which runs every
                                           block as written, without its "sub:" lines: the
                                           numbers of the long runs, minutes to hours)
      env: DPCORR_ISA=sse2
      before: cp examples/calibrate.c app.c
      timeout: 120                        (seconds; default 180, x60 with DOCS_FULL=1)
    -->

KIND is
  sh         shell commands, run by sh -e in the file's scratch directory (below);
  python     Python, run with PYTHONPATH=python; the python blocks of one file share one
             namespace, in order, as in a notebook; a top-level expression prints its value
             (so an "expect" can check a number the text states next to it); "before:" lines
             are prepended (a model or a data set the snippet assumes);
  c          C source: written to app.c, compiled with the documented command against a
             `make install` into a scratch prefix (pkg-config), and run; "c main" appends an
             empty main() to a fragment and only compiles it;
  file NAME  the block is a file the next blocks use: written to NAME in the scratch directory;
  text       not a command (output, formulas, a layout, a usage synopsis): not run, counted;
  skip       a command that cannot run here (the argument says why): not run and counted and
             reported as skipped, never as passed.
A "claim" marker has no block: its "run:" lines are commands stated in the running text and its
"expect:" lines the numbers the text gives for them.

Each Markdown file runs in its own scratch directory: symlinks to the repository's top-level
entries (python/ copied, as pip builds in place; build -> $BUILD, the tree built by make;
dpcorr on PATH), HOME inside it (and one XDG_CACHE_HOME for the run), so the commands' outputs
(out/, run.json, ck.bin, .venv, ...) never touch the checkout.

Usage: run_docs.py [--list] [--keep] FILE.md...   (from the repository root; BUILD, PYTHON;
DOCS_JOBS: files run at a time, default 2)
Prints one line per block, the skipped blocks with their reasons, then "N passed, N failed".
"""
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.getcwd()
BUILD = os.path.realpath(os.environ.get("BUILD", "build"))
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
KINDS = ("sh", "python", "c", "file", "text", "skip", "claim")
MARK = re.compile(r"^\s*<!--\s*doctest:\s*(\S+)\s*(.*?)\s*(-->)?\s*$")
FENCE = re.compile(r"^(\s*)(```+|~~~+)")
FULL = os.environ.get("DOCS_FULL") == "1"  # run every block as written, check "full:" too
C_BUILD = ("cc -std=c11 -O2 app.c $(pkg-config --cflags --libs dpcorr) -lm "
           "-Wl,-rpath,$DOC_PREFIX/lib")


class Block:
    def __init__(self, path, line, code, marker):
        self.path, self.line, self.code, self.marker = path, line, code, marker
        self.where = "%s:%d" % (path, line)


class Marker:
    def __init__(self, line, kind, arg):
        self.line, self.kind, self.arg, self.opts = line, kind, arg, []

    def get(self, key):
        return [v for k, v in self.opts if k == key]


def parse_marker(lines, i):
    """The marker starting at lines[i]: (Marker, index after it) or (error, index)."""
    m = MARK.match(lines[i])
    mk = Marker(i + 1, m.group(1), m.group(2))
    if m.group(3):
        return mk, i + 1
    j = i + 1
    while j < len(lines) and "-->" not in lines[j]:
        s = lines[j].strip()
        if s:
            k, sep, v = s.partition(":")
            if not sep:
                return "%d: marker line without 'key:': %r" % (j + 1, s), j + 1
            mk.opts.append((k.strip(), v.strip()))
        j += 1
    if j == len(lines):
        return "%d: marker not closed by -->" % (i + 1), j
    if lines[j].strip() != "-->":
        return "%d: put the closing --> on a line of its own" % (j + 1), j + 1
    return mk, j + 1


def parse(path):
    """(blocks, claims, errors) of one Markdown file."""
    lines = open(path, encoding="utf-8").read().split("\n")
    blocks, claims, errors = [], [], []
    pending, i, prev_blank = None, 0, True
    while i < len(lines):
        ln = lines[i]
        if MARK.match(ln):
            mk, i = parse_marker(lines, i)
            if isinstance(mk, str):
                errors.append("%s:%s" % (path, mk))
                continue
            if mk.kind not in KINDS:
                errors.append("%s:%d: unknown doctest kind %r" % (path, mk.line, mk.kind))
            elif mk.kind == "claim":
                claims.append(Block(path, mk.line, "", mk))
            else:
                if pending:
                    errors.append("%s:%d: marker without a block" % (path, pending.line))
                pending = mk
            prev_blank = True
            continue
        f = FENCE.match(ln)
        code, start = None, i + 1
        if f:
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(f.group(2)):
                j += 1
            code, i = lines[i + 1:j], j + 1
            prev_blank = False
        elif prev_blank and ln.startswith(("    ", "\t")) and ln.strip():
            j = i
            while j < len(lines) and (lines[j].startswith(("    ", "\t")) or not lines[j].strip()):
                j += 1
            while not lines[j - 1].strip():
                j -= 1
            code, i = [x[4:] if x.startswith("    ") else x.lstrip("\t") for x in lines[i:j]], j
            prev_blank = False
        if code is not None:
            if pending is None:
                errors.append("%s:%d: code block without a doctest marker (first line: %r)"
                              % (path, start, (code[0] if code else "").strip()[:60]))
            else:
                blocks.append(Block(path, start, "\n".join(code) + "\n", pending))
            pending = None
            continue
        if ln.strip():
            if pending is not None:
                errors.append("%s:%d: marker not followed by a code block" % (path, pending.line))
                pending = None
        prev_blank = not ln.strip()
        i += 1
    if pending is not None:
        errors.append("%s:%d: marker not followed by a code block" % (path, pending.line))
    return blocks, claims, errors


def apply_subs(b):
    """The block's code with its "sub:" replacements; (code, error). DOCS_FULL=1: as written."""
    code = b.code
    for s in b.marker.get("sub"):
        if FULL:
            break
        old, sep, new = s.partition(" => ")
        if not sep:
            return None, "sub without ' => ': %r" % s
        # "quoted" sides keep their spaces (editors strip trailing blanks)
        old, new = (x[1:-1] if len(x) > 1 and x[0] == x[-1] == '"' else x for x in (old, new))
        if old not in code:
            return None, "sub %r: not in the block (the doc changed: update the marker)" % old
        code = code.replace(old, new)
    return code, None


def scratch_dir(work, name):
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, "home"))
    os.makedirs(os.path.join(d, ".bin"))
    for e in os.listdir(ROOT):
        if e in (".git", "build") or e.startswith("build-") or e == "out":
            continue
        if e == "python":  # pip install ./python builds in place (python/build, egg-info)
            shutil.copytree(os.path.join(ROOT, e), os.path.join(d, e), symlinks=True,
                            ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            continue
        os.symlink(os.path.join(ROOT, e), os.path.join(d, e))
    os.symlink(BUILD, os.path.join(d, "build"))
    os.symlink(os.path.join(BUILD, "dpcorr"), os.path.join(d, ".bin", "dpcorr"))
    return d


def block_env(d, prefix, extra):
    env = dict(os.environ)
    for k in ("BUILD", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PKG_CONFIG_PATH"):
        env.pop(k, None)
    # one feature cache for the whole run: pages that train on the same ScatterNet inputs
    # compute them once
    env.update(HOME=os.path.join(d, "home"),
               XDG_CACHE_HOME=os.path.join(os.path.dirname(d), "cache"),
               PATH=os.path.join(d, ".bin") + os.pathsep + env.get("PATH", ""),
               DOC_PREFIX=prefix, PYTHON=PYTHON, PYTHONDONTWRITEBYTECODE="1")
    for kv in extra:
        k, _, v = kv.partition("=")
        env[k] = v
    return env


def run_sh(script, d, env, timeout):
    path = os.path.join(d, ".block.sh")
    with open(path, "w") as fh:
        fh.write(script)
    try:
        p = subprocess.run(["sh", "-e", path], cwd=d, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
        return p.returncode, p.stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode("utf-8", "replace")
        return 124, out + "\n(timed out after %d s)" % timeout


# The notebook driver: runs the python blocks of one file in one namespace; a top-level
# expression statement prints its repr; each block's output ends with a marker line.
DRIVER = r'''
import ast, json, sys, traceback
blocks = json.load(open(sys.argv[1]))
ns = {"__name__": "__main__"}
for b in blocks:
    try:
        exec(compile(b["before"], b["where"] + " (before:)", "exec"), ns)
        tree = ast.parse(b["code"], b["where"])
        for node in tree.body:
            if isinstance(node, ast.Expr):
                v = eval(compile(ast.Expression(node.value), b["where"], "eval"), ns)
                if v is not None:
                    print(repr(v))
            else:
                exec(compile(ast.Module([node], []), b["where"], "exec"), ns)
        rc = 0
    except BaseException:
        traceback.print_exc(file=sys.stdout)
        rc = 1
    sys.stdout.flush()
    print("@@doctest-end %s %d" % (b["where"], rc), flush=True)
'''


def run_python(blocks, d, env, timeout):
    """{where: (rc, output)} for the python blocks of one file, or a reason to skip them."""
    probe = subprocess.run([PYTHON, "-c", "import numpy, torch"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    if probe.returncode != 0:
        return "%s lacks numpy or torch (scripts/setup.sh installs them)" % PYTHON
    items = []
    for b in blocks:
        code, err = apply_subs(b)
        if err:
            items.append({"where": b.where, "before": "", "code": "raise SystemExit(%r)" % err})
            continue
        items.append({"where": b.where, "before": "\n".join(b.marker.get("before")),
                      "code": code})
    with open(os.path.join(d, ".blocks.json"), "w") as fh:
        json.dump(items, fh)
    with open(os.path.join(d, ".driver.py"), "w") as fh:
        fh.write(DRIVER)
    env = dict(env, PYTHONPATH=os.path.join(d, "python"))
    try:
        p = subprocess.run([PYTHON, ".driver.py", ".blocks.json"], cwd=d, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        out, rc = p.stdout.decode("utf-8", "replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode("utf-8", "replace") + "\n(timed out)", 124
    res, cur = {}, []
    for line in out.split("\n"):
        m = re.match(r"^@@doctest-end (\S+) (\d+)$", line)
        if m:
            res[m.group(1)] = (int(m.group(2)), "\n".join(cur))
            cur = []
        else:
            cur.append(line)
    for b in blocks:
        if b.where not in res:
            res[b.where] = (rc or 1, "\n".join(cur) + "\n(the notebook ended before this block)")
    return res


class Tally:
    """One file's results; its lines are printed when the file is done (files run in parallel)."""
    def __init__(self):
        self.passed = self.failed = self.text = 0
        self.skipped, self.lines = [], []

    def result(self, where, ok, what, out="", secs=0.0):
        if ok:
            self.passed += 1
            self.lines.append("ok    %s (%s, %.1f s)" % (where, what, secs))
        else:
            self.failed += 1
            self.lines.append("FAIL  %s: %s" % (where, what))
            tail = out.strip().split("\n")[-25:] if out.strip() else []
            self.lines.extend("      | " + t for t in tail)

    def add(self, other):
        self.passed += other.passed
        self.failed += other.failed
        self.text += other.text
        self.skipped += other.skipped
        for line in other.lines:
            print(line)
        sys.stdout.flush()


def check_expect(b, out):
    """The first "expect:" pattern the output lacks, or None."""
    for pat in b.marker.get("expect") + (b.marker.get("full") if FULL else []):
        if not re.search(pat, out, re.M):
            return "no match for /%s/" % pat
    for spec in b.marker.get("near"):
        m = re.match(r"^(.*?) = (\S+) \+- (\S+)$", spec)
        if not m:
            return "near: %r is not 'LABEL = VALUE +- TOL'" % spec
        want, tol = float(m.group(2)), float(m.group(3))
        got = [float(x) for x in re.findall(r"(?:^|\s)%s\s*[:=]?\s*([-+0-9.eE]+)" % m.group(1), out)
               if re.match(r"^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$", x)]
        if not any(abs(g - want) <= tol for g in got):
            return "%s: want %g +- %g, got %s" % (m.group(1), want, tol, got or "none")
    for pat in b.marker.get("reject"):
        m = re.search(pat, out, re.M)
        if m:
            return "/%s/ matches %r" % (pat, out[m.start():m.start() + 120])
    return None


def run_file(path, work, prefix):
    tally = Tally()
    blocks, claims, errors = parse(path)
    for e in errors:
        tally.result(e.split(": ")[0], False, e.split(": ", 1)[1])
    d = scratch_dir(work, re.sub(r"[^A-Za-z0-9]", "_", path))
    py = [b for b in blocks if b.marker.kind == "python"]
    pyres = run_python(py, d, block_env(d, prefix, []), 600) if py else {}
    for b in blocks + claims:
        mk = b.marker
        if mk.kind == "text":
            tally.text += 1
            continue
        if mk.kind == "skip":
            tally.skipped.append("%s: %s" % (b.where, mk.arg or "(no reason given)"))
            if not mk.arg:
                tally.result(b.where, False, "skip without a reason")
            continue
        if mk.kind == "file":
            if not mk.arg:
                tally.result(b.where, False, "file marker without a name")
                continue
            with open(os.path.join(d, mk.arg), "w") as fh:
                fh.write(b.code)
            tally.text += 1
            continue
        t0 = time.time()
        if mk.kind == "python":
            if isinstance(pyres, str):
                tally.skipped.append("%s: %s" % (b.where, pyres))
                continue
            rc, out = pyres[b.where]
        else:
            if mk.kind == "claim":
                code, err = "\n".join(mk.get("run")) + "\n", None
                if not mk.get("run"):
                    err = "claim without run: lines"
            else:
                code, err = apply_subs(b)
            if err:
                tally.result(b.where, False, err)
                continue
            if mk.kind == "c":
                src = code + ("\nint main(void) { return 0; }\n" if mk.arg == "main" else "")
                with open(os.path.join(d, "app.c"), "w") as fh:
                    fh.write(src)
                code = ("export PKG_CONFIG_PATH=$DOC_PREFIX/lib/pkgconfig\n%s -o app\n./app\n"
                        % (mk.get("build") or [C_BUILD])[0])
            code = "\n".join(mk.get("before")) + "\n" + code
            timeout = int((mk.get("timeout") or ["180"])[0]) * (60 if FULL else 1)
            rc, out = run_sh(code, d, block_env(d, prefix, mk.get("env")), timeout)
        secs = time.time() - t0
        what = mk.kind + (" shortened" if mk.get("sub") else "")
        if rc != 0:
            tally.result(b.where, False, "exit %d" % rc, out)
            continue
        bad = check_expect(b, out)
        if bad:
            tally.result(b.where, False, "the output contradicts the text: " + bad, out)
            continue
        tally.result(b.where, True, what, secs=secs)
    return tally


def install_prefix(work):
    """A `make install` of the built tree into a scratch prefix (for the C blocks)."""
    prefix = os.path.join(work, "prefix")
    p = subprocess.run(["make", "-s", "BUILD=" + BUILD, "PREFIX=" + prefix, "install"], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return prefix, p.returncode, p.stdout.decode("utf-8", "replace")


def main(argv):
    files = [a for a in argv if not a.startswith("--")]
    if "--list" in argv:
        for f in files:
            blocks, claims, errors = parse(f)
            for b in blocks + claims:
                print("%s %s %s %s" % (b.where, b.marker.kind, b.marker.arg,
                                       b.code.split("\n")[0][:70]))
            for e in errors:
                print("ERROR " + e)
        return 0
    work = tempfile.mkdtemp(prefix="dpcorr-docs.")
    tally = Tally()
    t0 = time.time()
    try:
        needs_c = any(b.marker.kind == "c" for f in files for b in parse(f)[0])
        prefix = os.path.join(work, "prefix")
        if needs_c:
            prefix, rc, out = install_prefix(work)
            if rc != 0:
                tally.result("make install", False, "exit %d" % rc, out)
                print("\n".join(tally.lines))
        # two files at a time: much of a page's time is start-up, linking and waiting
        jobs = int(os.environ.get("DOCS_JOBS", "2"))
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            for fut in [pool.submit(run_file, f, work, prefix) for f in files]:
                tally.add(fut.result())
    finally:
        if "--keep" in argv:
            print("scratch kept in " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    for s in tally.skipped:
        print("skipped " + s)
    print("docs: %d blocks run, %d not commands (text, files), %d skipped, %.0f s"
          % (tally.passed + tally.failed, tally.text, len(tally.skipped), time.time() - t0))
    print("%d passed, %d failed" % (tally.passed, tally.failed))
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Generate a blind test corpus of student submissions for a code-similarity detector.

Usage:  python3 make.py OUT        (writes OUT/classes/ and OUT/meta/)

Python 3.11 standard library only for generation (numpy is needed only to *run*
the generated submissions, see check.py).  The starter text of the notebooks is
in notebook_text.py; implementation styles in styles_lmhead.py / styles_ppl.py;
name pools in names.py.
"""
import ast
import builtins
import copy
import itertools
import json
import os
import random
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from registry import STYLES  # noqa: E402
import styles_lmhead  # noqa: E402,F401  (registers styles)
import styles_ppl  # noqa: E402,F401
from names import NAMES, TEMP_NAMES  # noqa: E402
from notebook_text import NOTEBOOKS  # noqa: E402

# ----------------------------------------------------------------------------- assignments

ASSIGN = {}
for key, cells in NOTEBOOKS.items():
    funcs, defs, docs, qnum, pending = [], {}, {}, {}, []
    for c in cells:
        if c[0] == "func":
            funcs.append(c[1]); defs[c[1]] = c[2]; docs[c[1]] = c[3]; pending.append(c[1])
        elif c[0] == "check":
            q = re.search(r'"(q\d+)"', c[1]).group(1)
            for f in pending:
                qnum[f] = q
            pending = []
    params = {}
    for f in funcs:
        fn = ast.parse(defs[f] + "\n    pass\n").body[0]
        params[f] = [a.arg for a in fn.args.args]
    starter = [c[1] for c in cells if c[0] == "starter"][0]
    ASSIGN[key] = dict(funcs=funcs, defs=defs, docs=docs, qnum=qnum, params=params,
                       starter=starter, cells=cells)

ASSIGN["lm-head"]["substantial"] = ["softmax", "cross_entropy_loss", "lm_head_backward",
                                    "numerical_gradient", "next_token_batch"]
ASSIGN["lm-head"]["low_effort_sets"] = [["lm_head"], ["lm_head", "max_rel_err"], ["max_rel_err"],
                                        ["lm_head", "softmax"]]
ASSIGN["perplexity-and-parameters"]["substantial"] = ["masked_cross_entropy", "gpt_param_count",
                                                      "greedy_next_token", "perplexity", "causal_mask"]
ASSIGN["perplexity-and-parameters"]["low_effort_sets"] = [
    ["perplexity_from_loss"], ["tied_lm_head", "causal_mask"],
    ["sequence_log_prob", "perplexity_from_loss", "tied_lm_head"], ["causal_mask"],
    ["tied_lm_head"]]

# array-valued parameters (used by dead-code snippets)
ARRAY_PARAMS = {"data", "hidden", "W_head", "b_head", "x", "logits", "targets", "dlogits", "a", "n",
                "cond_probs", "token_probs", "mask", "E", "h_last"}

ALL_FUNCS = {f for a in ASSIGN.values() for f in a["funcs"]}
FORBIDDEN_BASE = set(dir(builtins)) | {"np", "math", "itertools", "sliding_window_view", "Callable"} | ALL_FUNCS

HABITS = ["none", "sparse", "normal", "heavy"]
HABIT_P = {"none": 0.0, "sparse": 0.35, "normal": 0.75, "heavy": 1.0}
HEAVY_TOP = ["my solution", "implementation below", "TODO: double check the edge cases",
             "passes the public checks", "following the lecture notes", "written after the lab session"]


def style_of(func, name):
    for s in STYLES[func]:
        if s.name == name:
            return s
    raise KeyError((func, name))


# ----------------------------------------------------------------------------- specs

@dataclass
class FuncSpec:
    func: str
    style: str
    seed: int              # micro-variation choices inside the style
    names_seed: int        # which synonym for every local-name role
    comment_seed: int      # comment phrasing / decoration
    habit: str             # comment density
    doc_mode: str          # keep | drop | short
    origin: str | None     # who authored this function text (None: stub)
    written: bool = True
    dead: int | None = None   # seed of the dead-code / temporaries disguise


@dataclass
class Student:
    sid: str
    assignment: str
    funcs: dict
    order: list
    fmt: str               # script | nbconvert | percent
    demo: bool             # percent format: keeps the demo cells
    layout_seed: int
    parent: str | None = None
    disguises: list = field(default_factory=list)
    group: int | None = None
    role: str = "independent"


class Ctx:
    """Render context handed to a style's build function."""

    def __init__(self, fs, forbidden):
        self.r = random.Random(f"micro|{fs.seed}")
        self.names_seed = fs.names_seed
        self.imports = set()
        self.helpers = []
        self.forbidden = set(forbidden)
        self.assigned = {}

    def ch(self, *opts):
        return self.r.choice(opts)

    def helper(self, code):
        self.helpers.append(code)

    def name(self, role):
        if role in self.assigned:
            return self.assigned[role]
        pool = NAMES[role]
        start = random.Random(f"name|{self.names_seed}|{role}").randrange(len(pool))
        used = set(self.assigned.values())
        for k in range(len(pool)):
            cand = pool[(start + k) % len(pool)]
            if cand not in used and cand not in self.forbidden:
                break
        else:
            cand = pool[start] + "_" + str(len(used))
        self.assigned[role] = cand
        return cand


def _subst_names(text, ctx):
    return re.sub(r"\$([A-Za-z_]\w*)", lambda m: ctx.name(m.group(1)), text)


def _comment_deco(comment_seed):
    cr = random.Random(f"deco|{comment_seed}")
    return dict(prefix=cr.choice(["# "] * 6 + ["#"]), cap=cr.random() < 0.5,
                period=cr.random() < 0.25, steps=cr.random() < 0.3)


def _subst_comments(text, fs):
    deco = _comment_deco(fs.comment_seed)
    p = HABIT_P[fs.habit]
    counter = itertools.count()
    step = itertools.count(1)

    def rep(m):
        j = next(counter)
        cr = random.Random(f"cmt|{fs.comment_seed}|{fs.func}|{j}")
        opts = [o.strip() for o in m.group(2).split("|")]
        keep = cr.random() < p
        phr = cr.choice(opts)
        if not keep:
            return None
        if deco["cap"]:
            phr = phr[0].upper() + phr[1:]
        if deco["period"]:
            phr += "."
        if fs.habit == "heavy" and deco["steps"]:
            phr = f"Step {next(step)}: {phr}"
        return m.group(1) + deco["prefix"] + phr

    out = []
    for line in text.split("\n"):
        m = re.match(r"^(\s*)#@ (.*)$", line)
        if m:
            r = rep(m)
            if r is not None:
                out.append(r)
        else:
            out.append(line)
    return "\n".join(out)


def _indent(text, n=4):
    pad = " " * n
    return "\n".join(pad + l if l.strip() else "" for l in text.split("\n"))


def _short_doc(func, seed):
    r = random.Random(f"doc|{seed}|{func}")
    words = func.replace("_", " ")
    return r.choice([f'"""{words}."""', f'"""My {words}."""', f'"""Compute {words}."""',
                     f'"""TODO: docstring"""', f'"""{words} (see question text)."""'])


DEAD_SNIPPETS = ["_debug = False", "unused = None", "counter = 0", "if False:\n    print('debug')",
                 "_ = {p}.shape", "checked = {p} is not None", "pass", "verbose = False",
                 "tmp_list = []", "_dtype = {p}.dtype"]


def _add_dead(text, seed, params):
    """Insert dead statements between top-level statements of the function and
    turn a final ``return expr`` into a temporary."""
    r = random.Random(f"dead|{seed}")
    fn = ast.parse(text).body[0]
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    lines = text.split("\n")
    arr = [p for p in params if p in ARRAY_PARAMS]
    starts = sorted({s.lineno - 1 for s in body})
    k = min(len(starts), r.randint(1, 3))
    points = sorted(r.sample(starts, k), reverse=True)
    # temporaries on the final return
    last = body[-1] if body else None
    if isinstance(last, ast.Return) and last.value is not None and last.lineno == last.end_lineno \
            and r.random() < 0.7:
        li = last.lineno - 1
        tmp = next(t for t in r.sample(TEMP_NAMES, len(TEMP_NAMES)) if not re.search(rf"\b{t}\b", text))
        expr = lines[li].strip()[len("return "):]
        lines[li:li + 1] = [f"    {tmp} = {expr}", f"    return {tmp}"]
    for li in points:
        snip = r.choice([s for s in DEAD_SNIPPETS if arr or "{p}" not in s])
        if "{p}" in snip:
            snip = snip.format(p=r.choice(arr))
        nm = re.match(r"(\w+) =", snip)
        if nm and re.search(rf"\b{nm.group(1)}\b", text):
            snip = "pass"
        lines[li:li] = ["    " + l for l in snip.split("\n")]
    return "\n".join(lines)


def render_function(assign, fs):
    """Return (helpers_text_list, function_text, imports)."""
    A = ASSIGN[assign]
    defl, doc = A["defs"][fs.func], A["docs"][fs.func]
    if not fs.written:
        return [], defl + "\n" + doc + "\n    ...", set()
    st = style_of(fs.func, fs.style)
    ctx = Ctx(fs, FORBIDDEN_BASE | set(A["params"][fs.func]))
    body = textwrap.dedent(st.build(ctx)).strip("\n")
    helpers = [textwrap.dedent(h).strip("\n") for h in ctx.helpers]
    helpers = [_subst_comments(_subst_names(h, ctx), fs) for h in helpers]
    body = _subst_comments(_subst_names(body, ctx), fs)
    if fs.habit == "heavy":
        hr = random.Random(f"top|{fs.comment_seed}|{fs.func}")
        if hr.random() < 0.5:
            deco = _comment_deco(fs.comment_seed)
            body = deco["prefix"] + hr.choice(HEAVY_TOP) + "\n" + body
    parts = [defl]
    if fs.doc_mode == "keep":
        parts.append(doc)
    elif fs.doc_mode == "short":
        parts.append("    " + _short_doc(fs.func, fs.comment_seed))
    parts.append(_indent(body))
    text = "\n".join(parts)
    if fs.dead is not None:
        text = _add_dead(text, fs.dead, A["params"][fs.func])
        dr = random.Random(f"deadhelper|{fs.dead}")
        if dr.random() < 0.3:
            helpers.append(dr.choice([
                "def _check_shapes(*arrays):\n    return [np.shape(a_) for a_ in arrays]",
                "def _unused_helper(v):\n    # not used anymore\n    return v",
                "def debug_print(*args):\n    pass"]))
    return helpers, text, ctx.imports


def render_student(s):
    A = ASSIGN[s.assignment]
    lr = random.Random(f"layout|{s.layout_seed}")
    gap = "\n\n\n" if lr.random() < 0.8 else "\n\n"
    blocks, imports = {}, set()
    for f in A["funcs"]:
        helpers, text, imps = render_function(s.assignment, s.funcs[f])
        imports |= imps
        blocks[f] = gap.join(helpers + [text])
    starter = A["starter"]
    if imports:
        starter = starter.replace("import numpy as np\n", "import numpy as np\n" + "".join(
            i + "\n" for i in sorted(imports)), 1)
    if s.fmt == "script":
        out = starter.rstrip("\n") + gap + gap.join(blocks[f] for f in s.order) + "\n"
    elif s.fmt == "percent":
        cells = [starter.rstrip("\n")] + [blocks[f] for f in s.order]
        if s.demo:
            cells += [c[1].rstrip("\n") for c in A["cells"] if c[0] == "demo"]
        out = "\n\n".join("# %%\n" + c for c in cells) + "\n"
    else:  # nbconvert --to script, grader lines commented out
        out = ["#!/usr/bin/env python\n# coding: utf-8\n"]
        n = 2
        for c in A["cells"]:
            if c[0] == "markdown":
                out.append("\n".join(("# " + l) if l.strip() else "#" for l in c[1].split("\n")))
                continue
            if c[0] == "starter":
                src = starter.rstrip("\n")
            elif c[0] == "func":
                src = blocks[c[1]]
            elif c[0] in ("check", "export"):
                src = "# " + c[1].replace("\n", "\n# ")
            else:
                src = c[1].rstrip("\n")
            out.append(f"# In[{n}]:\n\n\n" + src)
            n += 1
        out = "\n\n\n".join(out) + "\n"
    return out


# ----------------------------------------------------------------------------- drawing students

WRONG_RATE = 0.12


def draw_style(func, r):
    sts = STYLES[func]
    wrong = [s for s in sts if s.wrong]
    right = [s for s in sts if not s.wrong]
    if wrong and r.random() < WRONG_RATE:
        return r.choice(wrong).name
    weights = [3 if s.obvious else 1 for s in right]
    return r.choices(right, weights)[0].name


def new_sid(r, taken):
    while True:
        sid = "st" + "".join(r.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(6))
        if sid not in taken:
            taken.add(sid)
            return sid


def independent_student(assign, sid, r, written=None):
    A = ASSIGN[assign]
    names_seed, comment_seed = r.randrange(10**9), r.randrange(10**9)
    habit = r.choices(HABITS, [2, 3, 4, 2])[0]
    doc_mode = r.choices(["keep", "drop", "short"], [75, 15, 10])[0]
    funcs = {}
    for f in A["funcs"]:
        w = written is None or f in written
        if w and written is not None:     # low effort: the obvious form if there is one
            obv = [s.name for s in STYLES[f] if s.obvious] or [STYLES[f][0].name]
            st = r.choice(obv)
        else:
            st = draw_style(f, r)
        funcs[f] = FuncSpec(f, st, r.randrange(10**9), names_seed, comment_seed, habit, doc_mode,
                            f"{sid}:{f}" if w else None, written=w)
    order = list(A["funcs"])
    fmt = r.choices(["script", "nbconvert", "percent"], [50, 25, 25])[0]
    if fmt == "script" and r.random() < 0.25:
        r.shuffle(order)      # some students keep their own order from the start
    return Student(sid, assign, funcs, order, fmt, r.random() < 0.5, r.randrange(10**9))


# ----------------------------------------------------------------------------- disguises

def d_verbatim(s, r):
    return s


def d_renamed(s, r):
    ns = r.randrange(10**9)
    for fs in s.funcs.values():
        if fs.written:
            fs.names_seed = ns
    return s


def d_recommented(s, r):
    cs = r.randrange(10**9)
    habits = [fs.habit for fs in s.funcs.values()]
    cur = max(set(habits), key=habits.count)
    new = r.choice([h for h in HABITS if h != cur and h != "none"] if cur == "none" else
                   [h for h in HABITS if h != cur] + [cur])
    newdoc = r.choice(["keep", "drop", "short"]) if r.random() < 0.4 else None
    for fs in s.funcs.values():
        fs.comment_seed = cs
        if fs.written:
            fs.habit = new
            if newdoc:
                fs.doc_mode = newdoc
    return s


def d_reordered(s, r):
    old = list(s.order)
    while s.order == old:
        r.shuffle(s.order)
    if s.fmt == "nbconvert":
        s.fmt = "script"
    return s


def d_loopvec(s, r):
    cands = []
    for f, fs in s.funcs.items():
        if not fs.written:
            continue
        kind = style_of(f, fs.style).kind
        opp = [st.name for st in STYLES[f] if not st.wrong and st.kind != kind]
        if opp:
            cands.append((f, opp))
    k = min(len(cands), r.choice([1, 1, 2]))
    for f, opp in r.sample(cands, k):
        fs = s.funcs[f]
        fs.style = r.choice(opp)
        fs.seed = r.randrange(10**9)
        fs.origin = f"{s.sid}:{f}"
    return s


def d_deadcode(s, r):
    written = [f for f, fs in s.funcs.items() if fs.written]
    for f in r.sample(written, min(len(written), r.randint(2, 4))):
        s.funcs[f].dead = r.randrange(10**9)
    return s


DISGUISES = {"verbatim": d_verbatim, "renamed": d_renamed, "recommented": d_recommented,
             "reordered": d_reordered, "loop_vec_swap": d_loopvec, "dead_code": d_deadcode}


def copy_student(src, sid, kinds, r):
    s = copy.deepcopy(src)
    s.sid, s.parent, s.disguises, s.group, s.role = sid, src.sid, list(kinds), None, "copy"
    for k in kinds:
        s = DISGUISES[k](s, r)
    return s


def partial_copy(src, sid, r):
    A = ASSIGN[src.assignment]
    s = independent_student(src.assignment, sid, r)
    subs = [f for f in A["substantial"] if src.funcs[f].written]
    chosen = r.sample(subs, min(len(subs), r.choice([2, 3])))
    for f in chosen:
        s.funcs[f] = copy.deepcopy(src.funcs[f])
    s.parent, s.disguises, s.role = src.sid, [f"partial({','.join(chosen)})"], "copy"
    return s


# ----------------------------------------------------------------------------- classes

def build_class(name, assign, n, seed, group=0, kinds=None, chains=0, low=0, blank=0,
                obvious_match=0):
    r = random.Random(seed)
    taken = set()
    students = {}

    def add(s):
        students[s.sid] = s
        return s

    def indep():
        return add(independent_student(assign, new_sid(r, taken), r))

    groups = []
    if group:
        leader = indep()
        leader.group, leader.role = 0, "group-leader"
        members = [leader.sid]
        light = [["verbatim"], ["renamed"], ["recommented"], ["reordered"], ["dead_code"],
                 ["renamed", "reordered"], ["recommented", "dead_code"], ["renamed", "recommented"]]
        for _ in range(group - 1):
            m = add(copy_student(leader, new_sid(r, taken), r.choice(light), r))
            m.group, m.role = 0, "group-member"
            members.append(m.sid)
        groups.append(members)
    for kind, cnt in (kinds or {}).items():
        for _ in range(cnt):
            src = indep()
            sid = new_sid(r, taken)
            if kind == "partial":
                add(partial_copy(src, sid, r))
            elif kind == "combined":
                ks = r.sample(["renamed", "recommented", "reordered", "loop_vec_swap", "dead_code"],
                              r.randint(2, 4))
                add(copy_student(src, sid, ks, r))
            else:
                add(copy_student(src, sid, [kind], r))
    single = ["verbatim", "renamed", "recommented", "reordered", "loop_vec_swap", "dead_code"]
    for ci in range(chains):
        a = indep()
        b = add(copy_student(a, new_sid(r, taken), [r.choice(single)], r))
        if ci % 3 == 2:      # a copy of a partial copy
            c = add(partial_copy(b, new_sid(r, taken), r))
        else:
            c = add(copy_student(b, new_sid(r, taken), r.sample(single[1:], r.randint(1, 2)), r))
    lows = []
    sets = ASSIGN[assign]["low_effort_sets"]
    for i in range(low):
        s = add(independent_student(assign, new_sid(r, taken), r, written=set(sets[i % len(sets)])))
        s.role = "low-effort"
        lows.append(s)
    for i in range(blank):
        s = add(independent_student(assign, new_sid(r, taken), r, written=set()))
        s.role = "blank"
        lows.append(s)
    starter_pairs = [sorted([a.sid, b.sid]) for a, b in itertools.combinations(lows, 2)]
    for i in range(obvious_match):
        if not lows:
            break
        lo = lows[i % len(lows)]
        if not any(fs.written for fs in lo.funcs.values()):
            continue
        full = indep()
        full.role = "obvious-match"
        for f, fs in lo.funcs.items():
            if fs.written:     # same obvious form, written on their own
                full.funcs[f].style, full.funcs[f].seed = fs.style, fs.seed
        starter_pairs.append(sorted([lo.sid, full.sid]))
    while len(students) < n:
        indep()
    assert len(students) == n, (name, len(students))
    return students, groups, starter_pairs


def _desc(s):
    return "+".join(s.disguises) if s.disguises else "original"


def pair_kind(a, b, S):
    if a.group is not None and a.group == b.group:
        return f"group ({_desc(a) if a.role != 'group-leader' else 'leader'} / " \
               f"{_desc(b) if b.role != 'group-leader' else 'leader'})"

    def chain(x):
        out = [x]
        while out[-1].parent:
            out.append(S[out[-1].parent])
        return out
    ca, cb = chain(a), chain(b)
    for x, cx, y in ((a, ca, b), (b, cb, a)):
        if y in cx:
            path = cx[:cx.index(y)]        # x, parent(x), ... (children of y down to x)
            if len(path) == 1:
                return _desc(x)
            return "copy_of_copy (" + " > ".join(_desc(p) for p in reversed(path)) + ")"
    common = [x for x in ca if x in cb]
    if common:
        return f"siblings via {common[0].sid} ({_desc(a)} / {_desc(b)})"
    return "shared origin"


def truth_for(assign, students, groups, starter_pairs):
    by_origin = {}
    for s in students.values():
        for fs in s.funcs.values():
            if fs.written and fs.origin:
                by_origin.setdefault(fs.origin, set()).add(s.sid)
    pairs = set()
    for sids in by_origin.values():
        for a, b in itertools.combinations(sorted(sids), 2):
            pairs.add((a, b))
    copy_pairs = [[a, b, pair_kind(students[a], students[b], students)] for a, b in sorted(pairs)]
    cp = {(a, b) for a, b, _ in copy_pairs}
    sp = [p for p in sorted(starter_pairs) if tuple(p) not in cp]
    return {"assignment": assign, "students": sorted(students),
            "copy_pairs": copy_pairs, "groups": [sorted(g) for g in groups],
            "starter_only_pairs": sp, "independent": "every other pair"}


CLASSES = [
    # name, assignment, n, seed, options
    ("lmhead-a-20", "lm-head", 20, 101, dict(group=3, kinds={"verbatim": 1, "renamed": 1, "partial": 1},
                                             low=2, obvious_match=1)),
    ("lmhead-b-60", "lm-head", 60, 102, dict(group=6, kinds={k: 1 for k in
                                             ["verbatim", "renamed", "recommented", "reordered",
                                              "loop_vec_swap", "dead_code", "partial", "combined"]},
                                             chains=2, low=3, obvious_match=2)),
    ("lmhead-c-200", "lm-head", 200, 103, dict(group=12, kinds={k: 2 for k in
                                               ["verbatim", "renamed", "recommented", "reordered",
                                                "loop_vec_swap", "dead_code", "partial", "combined"]},
                                               chains=3, low=5, blank=1, obvious_match=3)),
    ("lmhead-d-40-disguises", "lm-head", 40, 104, dict(kinds={"renamed": 2, "recommented": 1,
                                                             "reordered": 1, "loop_vec_swap": 2,
                                                             "dead_code": 2, "partial": 2,
                                                             "combined": 3}, chains=3, low=2,
                                                   obvious_match=1)),
    ("ppl-a-20", "perplexity-and-parameters", 20, 201, dict(group=3, kinds={"verbatim": 1, "renamed": 1,
                                                                           "partial": 1},
                                                           low=2, obvious_match=1)),
    ("ppl-b-60", "perplexity-and-parameters", 60, 202, dict(group=6, kinds={k: 1 for k in
                                                            ["verbatim", "renamed", "recommented",
                                                             "reordered", "loop_vec_swap", "dead_code",
                                                             "partial", "combined"]},
                                                            chains=2, low=3, obvious_match=2)),
    ("ppl-c-200", "perplexity-and-parameters", 200, 203, dict(group=12, kinds={k: 2 for k in
                                                              ["verbatim", "renamed", "recommented",
                                                               "reordered", "loop_vec_swap", "dead_code",
                                                               "partial", "combined"]},
                                                              chains=3, low=5, blank=1, obvious_match=3)),
    ("ppl-d-40-loweffort", "perplexity-and-parameters", 40, 204, dict(kinds={"verbatim": 1, "renamed": 1,
                                                                            "combined": 1, "partial": 1},
                                                                     chains=1, low=10, blank=2,
                                                                     obvious_match=5)),
    ("lmhead-e-1000", "lm-head", 1000, 105, dict(group=12, kinds={k: 4 for k in
                                                 ["verbatim", "renamed", "recommented", "reordered",
                                                  "loop_vec_swap", "dead_code", "partial", "combined"]},
                                                 chains=6, low=10, blank=2, obvious_match=5)),
]


def main(root):
    out = os.path.join(root, "classes")
    meta_dir = os.path.join(root, "meta")
    for d in (out, meta_dir):
        if os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d)
    for name, assign, n, seed, opts in CLASSES:
        students, groups, sp = build_class(name, assign, n, seed, **opts)
        cdir = os.path.join(out, name)
        os.makedirs(cdir)
        for s in students.values():
            with open(os.path.join(cdir, s.sid + ".py"), "w") as fh:
                fh.write(render_student(s))
        truth = truth_for(assign, students, groups, sp)
        with open(os.path.join(cdir, "truth.json"), "w") as fh:
            json.dump(truth, fh, indent=1)
        meta = {s.sid: {"role": s.role, "parent": s.parent, "disguises": s.disguises, "fmt": s.fmt,
                        "funcs": {f: {"style": fs.style, "written": fs.written, "origin": fs.origin,
                                      "wrong": style_of(f, fs.style).wrong if fs.written else None}
                                  for f, fs in s.funcs.items()}}
                for s in students.values()}
        with open(os.path.join(meta_dir, name + ".json"), "w") as fh:
            json.dump({"assignment": assign, "students": meta}, fh, indent=1)
        print(f"{name:28s} {assign:27s} students={n:5d} copy_pairs={len(truth['copy_pairs']):4d} "
              f"groups={[len(g) for g in groups]} starter_only_pairs={len(truth['starter_only_pairs'])}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python3 make.py OUT   (writes OUT/classes/ and OUT/meta/)")
    main(sys.argv[1])

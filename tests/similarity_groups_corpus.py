"""A class of ``lm-head`` submissions written the way different students write them, for groups and small work.

Independent students: every function is written in one of several styles
(loops or vectorised, a helper or inline, ``np.mean`` or a sum over ``N``,
``reshape`` or ``einsum``...), each style with its own small choices (an
intermediate variable or not, the order of two steps, ``-np.mean`` or
``np.mean(-...)``), and names drawn from what students call things. Short
functions therefore coincide between many students, as they do in a class,
and long ones rarely. Some students leave functions as the starter stub, a few
hand in the starter notebook untouched, and one attempted only three short
functions (``small_student``).

A group shares one solution that went round: every member has it, names
changed, comments added or removed, blank lines moved (``group_member``).
A disguised copy pair is one independent student's code, renamed and
re-commented, with its functions in another order (``disguised_copy``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from autograder.similarity.base import starter_cells

ASSIGNMENT = "lm-head"
FUNCTIONS = ("next_token_batch", "lm_head", "softmax", "cross_entropy_loss", "lm_head_backward",
             "numerical_gradient", "max_rel_err")

_SIGNATURES = {
    "next_token_batch": "def next_token_batch(data, ix, block_size):",
    "lm_head": "def lm_head(hidden, W_head, b_head):",
    "softmax": "def softmax(x, axis=-1):",
    "cross_entropy_loss": "def cross_entropy_loss(logits, targets):",
    "lm_head_backward": "def lm_head_backward(hidden, W_head, dlogits):",
    "numerical_gradient": "def numerical_gradient(f, x, eps=1e-6):",
    "max_rel_err": "def max_rel_err(a, n):",
}

_NAMES = {"xb": ["xb", "x_batch", "inputs", "X"], "yb": ["yb", "y_batch", "targets_out", "Y"],
          "i": ["i", "start", "s", "off"], "probs": ["probs", "p", "sm", "probabilities"],
          "N": ["N", "n_rows", "count", "m"], "grad": ["grad", "g", "out", "result"],
          "flat": ["flat", "lf", "logits2d", "z"], "t": ["t", "tf", "flat_targets", "tgt"],
          "e": ["e", "ex", "exps", "num"], "old": ["old", "orig", "saved", "tmp"]}


def _pick(rng: np.random.Generator, options: list[str]) -> str:
    return options[int(rng.integers(len(options)))]


def _names(rng: np.random.Generator) -> dict[str, str]:
    return {k: _pick(rng, v) for k, v in _NAMES.items()}


def _next_token_batch(rng: np.random.Generator, v: dict[str, str]) -> str:
    xb, yb, i = v["xb"], v["yb"], v["i"]
    style = int(rng.integers(4))
    if style == 0:
        return (f"    {xb} = np.stack([data[{i}:{i} + block_size] for {i} in ix])\n"
                f"    {yb} = np.stack([data[{i} + 1:{i} + block_size + 1] for {i} in ix])\n    return {xb}, {yb}\n")
    if style == 1:
        return (f"    {xb}, {yb} = [], []\n    for {i} in ix:\n        {xb}.append(data[{i}:{i} + block_size])\n"
                f"        {yb}.append(data[{i} + 1:{i} + 1 + block_size])\n    return np.array({xb}), np.array({yb})\n")
    if style == 2:
        return (f"    cols = np.arange(block_size)\n    {xb} = data[np.asarray(ix)[:, None] + cols]\n"
                f"    {yb} = data[np.asarray(ix)[:, None] + cols + 1]\n    return {xb}, {yb}\n")
    return (f"    {xb} = np.array([data[{i}:{i} + block_size] for {i} in ix])\n"
            f"    {yb} = np.array([data[{i} + 1:{i} + block_size + 1] for {i} in ix])\n    return {xb}, {yb}\n")


def _lm_head(rng: np.random.Generator, v: dict[str, str]) -> str:
    return _pick(rng, ["    return hidden @ W_head + b_head\n", "    return np.matmul(hidden, W_head) + b_head\n",
                       "    return np.einsum('btc,cv->btv', hidden, W_head) + b_head\n",
                       "    out = hidden @ W_head\n    out = out + b_head\n    return out\n",
                       "    return np.dot(hidden, W_head) + b_head\n"])


def _softmax(rng: np.random.Generator, v: dict[str, str]) -> str:
    e = v["e"]
    return _pick(rng, [
        f"    {e} = np.exp(x - x.max(axis=axis, keepdims=True))\n    return {e} / {e}.sum(axis=axis, keepdims=True)\n",
        f"    shifted = x - np.max(x, axis=axis, keepdims=True)\n    {e} = np.exp(shifted)\n"
        f"    return {e} / np.sum({e}, axis=axis, keepdims=True)\n",
        "    z = np.exp(x - np.max(x, axis=axis, keepdims=True))\n    return z / np.sum(z, axis=axis, keepdims=True)\n",
        f"    m = np.max(x, axis=axis, keepdims=True)\n    {e} = np.exp(x - m)\n    s = {e}.sum(axis=axis, keepdims=True)\n"
        f"    return {e} / s\n"])


def _cross_entropy(rng: np.random.Generator, v: dict[str, str]) -> str:
    p, n, t, flat = v["probs"], v["N"], v["t"], v["flat"]
    lines = []
    if rng.random() < 0.5:
        lines.append(f"    B, T, V = logits.shape\n    {n} = B * T")
        lines.append(f"    {flat} = logits.reshape({n}, V)")
    else:
        lines.append(f"    V = logits.shape[-1]\n    {flat} = logits.reshape(-1, V)\n    {n} = {flat}.shape[0]")
    lines.append(_pick(rng, [f"    {t} = targets.reshape(-1)", f"    {t} = targets.flatten()", f"    {t} = targets.ravel()"]))
    if rng.random() < 0.5:
        lines.append(f"    {p} = softmax({flat}, axis=1)")
    else:
        lines.append(f"    {flat} = {flat} - {flat}.max(axis=1, keepdims=True)\n    {p} = np.exp({flat})\n"
                     f"    {p} = {p} / {p}.sum(axis=1, keepdims=True)")
    picked = f"{p}[np.arange({n}), {t}]"
    lines.append(_pick(rng, [f"    loss = -np.mean(np.log({picked}))",
                             f"    loss = -np.log({picked}).sum() / {n}",
                             f"    loss = float(np.mean(-np.log({picked} + 1e-12)))",
                             f"    correct = {picked}\n    loss = -np.log(correct).mean()"]))
    if rng.random() < 0.5:
        lines.append(f"    d = {p}.copy()\n    d[np.arange({n}), {t}] -= 1\n    d /= {n}")
    else:
        lines.append(f"    onehot = np.zeros_like({p})\n    onehot[np.arange({n}), {t}] = 1.0\n    d = ({p} - onehot) / {n}")
    lines.append(_pick(rng, ["    return float(loss), d.reshape(logits.shape)",
                             "    dlogits = d.reshape(logits.shape)\n    return float(loss), dlogits"]))
    return "\n".join(lines) + "\n"


def _backward(rng: np.random.Generator, v: dict[str, str]) -> str:
    if rng.random() < 0.3:
        return ("    dW = np.einsum('btc,btv->cv', hidden, dlogits)\n    db = dlogits.sum(axis=(0, 1))\n"
                "    dh = np.einsum('btv,cv->btc', dlogits, W_head)\n    return dW, db, dh\n")
    c = _pick(rng, ["hidden.shape[-1]", "W_head.shape[0]"])
    first = f"    h2 = hidden.reshape(-1, {c})\n    d2 = dlogits.reshape(-1, dlogits.shape[-1])\n"
    dw = _pick(rng, ["    dW = h2.T @ d2\n", "    dW = np.dot(h2.T, d2)\n"])
    db = _pick(rng, ["    db = d2.sum(axis=0)\n", "    db = np.sum(d2, axis=0)\n"])
    dh = _pick(rng, ["    dh = dlogits @ W_head.T\n", "    dh = (d2 @ W_head.T).reshape(hidden.shape)\n"])
    return first + dw + db + dh + "    return dW, db, dh\n"


def _numerical(rng: np.random.Generator, v: dict[str, str]) -> str:
    g, old = v["grad"], v["old"]
    head = f"    {g} = np.zeros_like(x)\n"
    style = int(rng.integers(3))
    if style == 0:
        loop, idx = "    for idx in np.ndindex(x.shape):\n", "idx"
    elif style == 1:
        loop, idx = "    it = np.nditer(x, flags=['multi_index'])\n    while not it.finished:\n        idx = it.multi_index\n", "idx"
    else:
        loop, idx = "    flat = x.reshape(-1)\n    gflat = " + g + ".reshape(-1)\n    for j in range(flat.size):\n", "j"
    target = "flat" if style == 2 else "x"
    out = "gflat" if style == 2 else g
    body = (f"        {old} = {target}[{idx}]\n        {target}[{idx}] = {old} + eps\n        plus = f(x)\n"
            f"        {target}[{idx}] = {old} - eps\n        minus = f(x)\n        {target}[{idx}] = {old}\n")
    body += _pick(rng, [f"        {out}[{idx}] = (plus - minus) / (2 * eps)\n",
                        f"        {out}[{idx}] = (plus - minus) / 2 / eps\n"])
    if style == 1:
        body += "        it.iternext()\n"
    return head + loop + body + f"    return {g}\n"


def _max_rel_err(rng: np.random.Generator, v: dict[str, str]) -> str:
    return _pick(rng, [
        "    return float(np.max(np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))\n",
        "    num = np.abs(a - n)\n    den = np.maximum(np.abs(a), np.abs(n)) + 1e-12\n    return float((num / den).max())\n",
        "    err = np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)\n    return float(err.max())\n"])


_WRITERS = {"next_token_batch": _next_token_batch, "lm_head": _lm_head, "softmax": _softmax,
            "cross_entropy_loss": _cross_entropy, "lm_head_backward": _backward,
            "numerical_gradient": _numerical, "max_rel_err": _max_rel_err}

#: One student's full solution that went round a group: written its own way (a loop per row in the loss,
#: a clipped log, a flat-index gradient check), so that most of it is code no one else writes.
LEAKED = {
    "next_token_batch": ("    rows = [data[s:s + block_size + 1] for s in ix]\n    both = np.stack(rows)\n"
                         "    return both[:, :-1], both[:, 1:]\n"),
    "lm_head": "    return hidden @ W_head + b_head\n",
    "softmax": ("    top = np.max(x, axis=axis, keepdims=True)\n    w = np.exp(np.clip(x - top, -700, 0))\n"
                "    return w / w.sum(axis=axis, keepdims=True)\n"),
    "cross_entropy_loss": (
        "    V = logits.shape[-1]\n    rows = logits.reshape(-1, V).astype(np.float64)\n    labels = targets.reshape(-1)\n"
        "    total = 0.0\n    grad = np.empty_like(rows)\n    for r in range(rows.shape[0]):\n"
        "        row = rows[r] - rows[r].max()\n        lse = np.log(np.exp(row).sum())\n"
        "        total += lse - row[labels[r]]\n        grad[r] = np.exp(row - lse)\n        grad[r, labels[r]] -= 1.0\n"
        "    count = rows.shape[0]\n    return total / count, (grad / count).reshape(logits.shape)\n"),
    "lm_head_backward": (
        "    C = hidden.shape[-1]\n    V = dlogits.shape[-1]\n    flat_h = hidden.reshape(-1, C)\n"
        "    flat_d = dlogits.reshape(-1, V)\n    dW = np.einsum('nc,nv->cv', flat_h, flat_d)\n"
        "    db = flat_d.sum(0)\n    dh = np.einsum('nv,cv->nc', flat_d, W_head).reshape(hidden.shape)\n"
        "    return dW, db, dh\n"),
    "numerical_gradient": (
        "    g = np.zeros(x.size)\n    view = x.reshape(-1)\n    for pos in range(view.size):\n"
        "        keep = float(view[pos])\n        view[pos] = keep + eps\n        hi = f(x)\n"
        "        view[pos] = keep - eps\n        lo = f(x)\n        view[pos] = keep\n"
        "        g[pos] = (hi - lo) / (eps + eps)\n    return g.reshape(x.shape)\n"),
    "max_rel_err": "    scale = np.maximum(np.abs(a), np.abs(n))\n    return float(np.max(np.abs(a - n) / (scale + 1e-12)))\n",
}

_COMMENTS = ["# works", "# from office hours", "# shapes checked", "# vectorised", "# TODO clean up"]


@dataclass(frozen=True)
class Submission:
    name: str
    cells: list[str]


def notebook(bodies: dict[str, str]) -> list[str]:
    """The starter notebook's code cells with each function in ``bodies`` written (signature + body)."""
    cells = list(starter_cells(ASSIGNMENT))
    for function, body in bodies.items():
        index = next(i for i, c in enumerate(cells) if c.startswith(f"def {function}("))
        cells[index] = f"{_SIGNATURES[function]}\n{body}"
    return cells


def independent(name: str, rng: np.random.Generator, stub_chance: float = 0.1) -> Submission:
    """One student's own solution: each function in a style of its own, some left as the stub."""
    names = _names(rng)
    bodies = {f: _WRITERS[f](rng, names) for f in FUNCTIONS if rng.random() >= stub_chance}
    return Submission(name, notebook(bodies))


def starter_only(name: str) -> Submission:
    return Submission(name, list(starter_cells(ASSIGNMENT)))


def small_student(name: str) -> Submission:
    """Attempted three short functions, the obvious way (one slice off by one), the rest left as stubs."""
    return Submission(name, notebook({
        "next_token_batch": ("    xb = np.stack([data[i:i + block_size] for i in ix])\n"
                             "    yb = np.stack([data[i + 2:i + block_size + 1] for i in ix])\n    return xb, yb\n"),
        "lm_head": "    return hidden @ W_head + b_head\n",
        "max_rel_err": "    return float(np.max(np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))\n"}))


def _disguise(body: str, rng: np.random.Generator, suffix: str) -> str:
    """``body`` with its local names renamed, comments added and blank lines moved."""
    local = sorted(set(re.findall(r"^\s*([a-z_][a-z_0-9]*)\s*[+\-*/]?=", body, re.M))
                   | set(re.findall(r"for ([a-z_][a-z_0-9]*) in", body)))
    for word in local:
        body = re.sub(rf"\b{word}\b", f"{word}_{suffix}", body)
    lines = []
    for line in body.splitlines():
        if rng.random() < 0.3:
            lines.append(line[: len(line) - len(line.lstrip())] + _pick(rng, _COMMENTS))
        lines.append(line)
        if rng.random() < 0.2:
            lines.append("")
    return "\n".join(lines) + "\n"


def group_member(name: str, rng: np.random.Generator, index: int) -> Submission:
    """One member of the group sharing ``LEAKED``, disguised in its own way."""
    return Submission(name, notebook({f: _disguise(b, rng, f"m{index}") for f, b in LEAKED.items()}))


def disguised_copy(name: str, original: Submission, rng: np.random.Generator) -> Submission:
    """``original`` renamed and re-commented, its function cells in another order."""
    cells = list(original.cells)
    slots = [i for i, c in enumerate(cells) if c.startswith("def ")]
    bodies = []
    for i in slots:
        head, _, body = cells[i].partition("\n")
        bodies.append(f"{head}\n{_disguise(body, rng, 'cp')}")
    for slot, j in zip(slots, rng.permutation(len(slots))):
        cells[slot] = bodies[j]
    return Submission(name, cells)


def group_class(size: int, group: int, seed: int = 0) -> tuple[list[Submission], set[str]]:
    """A class of ``size``: ``group`` members sharing ``LEAKED``, two starter-only, the rest independent."""
    rng = np.random.default_rng([seed, size, group])
    members = [group_member(f"member-{i}", rng, i) for i in range(group)]
    others = [starter_only("starter-1"), starter_only("starter-2")]
    others += [independent(f"student-{i}", rng) for i in range(size - group - len(others))]
    return members + others, {m.name for m in members}

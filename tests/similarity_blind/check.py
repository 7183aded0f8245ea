#!/usr/bin/env python3
"""Tiny checker: every generated file imports (stdout of demo cells swallowed), every
written function runs on small inputs, correct styles give the right values, and
truth.json agrees with the folder.  Usage: python3 check.py OUT [class-name ...]
(OUT is the folder make.py wrote)."""
import contextlib, importlib.util, io, json, math, os, sys, warnings
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = sys.argv[1] if len(sys.argv) > 1 else HERE
warnings.filterwarnings("ignore")
np.seterr(all="ignore")


def ref_softmax(x, axis=-1):
    z = np.exp(x - x.max(axis=axis, keepdims=True)); return z / z.sum(axis=axis, keepdims=True)


def ref_ce(logits, targets, mask=None):
    V = logits.shape[-1]
    z = logits.reshape(-1, V).astype(np.float64)
    m = np.ones(len(z), bool) if mask is None else np.asarray(mask).reshape(-1).astype(bool)
    M = m.sum(); d = np.zeros_like(z)
    if M == 0:
        return 0.0, d.reshape(logits.shape)
    t = np.where(m, targets.reshape(-1), 0).astype(int)
    lp = z - z.max(1, keepdims=True); lp = lp - np.log(np.exp(lp).sum(1, keepdims=True))
    loss = -(lp[np.arange(len(z)), t] * m).sum() / M
    p = np.exp(lp); p[np.arange(len(z)), t] -= 1
    d = p * m[:, None] / M
    return float(loss), d.reshape(logits.shape)


def close(a, b):
    if isinstance(b, tuple):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(b, dict):
        return a == b
    a = np.asarray(a); b = np.asarray(b)
    return a.shape == b.shape and np.allclose(a, b, rtol=1e-6, atol=1e-9)


def cases_lm(rng):
    data = np.arange(40, dtype=np.int32) % 7
    ix = np.array([0, 5, 32])
    h = rng.standard_normal((2, 3, 4)); W = rng.standard_normal((4, 5)); b = rng.standard_normal(5)
    x = rng.standard_normal((3, 4)) * 50
    lg = rng.standard_normal((2, 3, 5)); tg = rng.integers(0, 5, (2, 3))
    dl = rng.standard_normal((2, 3, 5))
    xg = rng.standard_normal((3, 2)).T.copy().T   # non-contiguous view of a copy
    f = lambda v: float(np.sum(np.sin(v) * np.arange(v.size).reshape(v.shape)))
    an = rng.standard_normal(6); nn = an + 1e-3
    return {
        "next_token_batch": ((data, ix, 4), (np.stack([data[i:i+4] for i in ix]), np.stack([data[i+1:i+5] for i in ix]))),
        "lm_head": ((h, W, b), h @ W + b),
        "softmax": ((x, 0), ref_softmax(x, 0)),
        "cross_entropy_loss": ((lg, tg), ref_ce(lg, tg)),
        "lm_head_backward": ((h, W, dl), (h.reshape(-1, 4).T @ dl.reshape(-1, 5), dl.sum((0, 1)), dl @ W.T)),
        "numerical_gradient": ((f, xg), np.cos(xg) * np.arange(xg.size).reshape(xg.shape)),
        "max_rel_err": ((an, nn), float(np.max(np.abs(an - nn) / (np.maximum(abs(an), abs(nn)) + 1e-12)))),
    }


def cases_ppl(rng):
    p = rng.uniform(0.05, 1, 7)
    lg = rng.standard_normal((2, 3, 5)) * 3; tg = rng.integers(0, 5, (2, 3))
    mask = np.array([[1, 1, 0], [1, 0, 0]], bool); tg2 = tg.copy(); tg2[~mask] = -100
    h = rng.standard_normal((2, 3, 4)); E = rng.standard_normal((5, 4))
    hl = rng.standard_normal(4); W = rng.standard_normal((4, 6))
    gargs = (100, 16, 8, 2, 32, False)
    d, f, L, V, T = 8, 32, 2, 100, 16
    emb = (V + T) * d; att = L * (4 * d * d + 4 * d); ffn = L * (2 * d * f + f + d); ln = L * 4 * d; head = V * d
    return {
        "sequence_log_prob": ((p,), float(np.log(p).sum())),
        "perplexity": ((p,), float(np.exp(-np.log(p).mean()))),
        "perplexity_from_loss": ((1.3,), math.exp(1.3)),
        "masked_cross_entropy": ((lg, tg2, mask), ref_ce(lg, tg2, mask)),
        "tied_lm_head": ((h, E), h @ E.T),
        "greedy_next_token": ((hl, W), int(np.argmax(hl @ W))),
        "causal_mask": ((5,), np.triu(np.ones((5, 5), bool), 1)),
        "gpt_param_count": (gargs, dict(embeddings=emb, attention=att, ffn=ffn, layernorm=ln, lm_head=head,
                                        total=emb + att + ffn + ln + head)),
    }


DEPENDS = {("perplexity", "via_from_loss"): "perplexity_from_loss",
           ("perplexity", "via_sequence_log_prob"): "sequence_log_prob",
           ("cross_entropy_loss", "flatten_call_softmax"): "softmax",
           ("cross_entropy_loss", "nested_bt_softmax"): "softmax",
           ("cross_entropy_loss", "wrong_missing_1_over_N"): "softmax",
           ("cross_entropy_loss", "wrong_eps_in_log"): "softmax",
           ("cross_entropy_loss", "wrong_eye_onehot"): "softmax"}


def check_class(name):
    cdir = os.path.join(ROOT, "classes", name)
    truth = json.load(open(os.path.join(cdir, "truth.json")))
    meta = json.load(open(os.path.join(ROOT, "meta", name + ".json")))
    files = sorted(f[:-3] for f in os.listdir(cdir) if f.endswith(".py"))
    problems = []
    assert files == truth["students"], "students list differs from the folder"
    S = set(files)
    for a, b, _ in truth["copy_pairs"]:
        assert a in S and b in S and a < b
    for a, b in truth["starter_only_pairs"]:
        assert a in S and b in S
    cp = {(a, b) for a, b, _ in truth["copy_pairs"]}
    for g in truth["groups"]:
        for i in range(len(g)):
            for j in range(i + 1, len(g)):
                assert tuple(sorted((g[i], g[j]))) in cp, "group pair missing"
    assert not cp & {tuple(p) for p in truth["starter_only_pairs"]}
    nrun = nval = 0
    for sid in files:
        path = os.path.join(cdir, sid + ".py")
        spec = importlib.util.spec_from_file_location(f"{name.replace('-', '_')}_{sid}", path)
        mod = importlib.util.module_from_spec(spec)
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                spec.loader.exec_module(mod)
        except Exception as e:
            problems.append(f"{sid}: import failed: {type(e).__name__}: {e}")
            continue
        rng = np.random.default_rng(0)
        cases = cases_lm(rng) if truth["assignment"] == "lm-head" else cases_ppl(rng)
        for fn, info in meta["students"][sid]["funcs"].items():
            args, want = cases[fn]
            if not info["written"]:
                continue
            if fn == "numerical_gradient":
                x_before = args[1].copy()
            argsc = tuple(a.copy() if isinstance(a, np.ndarray) and fn != "numerical_gradient" else a for a in args)
            try:
                got = getattr(mod, fn)(*argsc)
                nrun += 1
            except Exception as e:
                problems.append(f"{sid}.{fn} [{info['style']}] raised {type(e).__name__}: {e}")
                continue
            dep = DEPENDS.get((fn, info["style"]))
            funcs = meta["students"][sid]["funcs"]
            if dep and (funcs[dep]["wrong"] is not None or not funcs[dep]["written"]):
                continue       # calls the student's own wrong (or missing) function
            if info["wrong"] is None:
                nval += 1
                if not close(got, want):
                    problems.append(f"{sid}.{fn} [{info['style']}] wrong value")
                if fn == "numerical_gradient" and not np.array_equal(argsc[1], x_before):
                    problems.append(f"{sid}.{fn} [{info['style']}] did not restore x exactly")
    return len(files), nrun, nval, problems


if __name__ == "__main__":
    names = sys.argv[2:] or sorted(os.listdir(os.path.join(ROOT, "classes")))
    bad = 0
    for n in names:
        nf, nrun, nval, probs = check_class(n)
        bad += len(probs)
        print(f"{n:28s} files={nf:5d} function-runs={nrun:6d} value-checked={nval:6d} problems={len(probs)}")
        for p in probs[:15]:
            print("   ", p)
    sys.exit(1 if bad else 0)

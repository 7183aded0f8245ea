"""Hand-written implementation styles for the perplexity-and-parameters assignment
(same conventions as styles_lmhead.py)."""
from registry import style

def _math(c):
    """A student who uses math either imports it at the top or inside the function."""
    if c.ch(0, 1):
        c.imports.add("import math")
        return ""
    return "import math\n\n"

FN = "sequence_log_prob"

@style(FN, "sum_log", "vec", obvious=True)
def _(c):
    return c.ch("return float(np.sum(np.log(cond_probs)))\n",
                "return float(np.log(cond_probs).sum())\n")

@style(FN, "asarray_temporaries", "vec")
def _(c):
    return """
$p = np.asarray(cond_probs, dtype=np.float64)
#@ sum of logs instead of log of a product | avoids underflow
$logs = np.log($p)
return float($logs.sum())
"""

@style(FN, "math_loop", "loop")
def _(c):
    return _math(c) + """
$total = 0.0
for $p in cond_probs:
    #@ add each conditional's log | chain rule in log space
    $total += math.log($p)
return $total
"""

@style(FN, "generator_sum", "loop")
def _(c):
    return """
$vals = np.ravel(cond_probs)
return float(sum(np.log($v) for $v in $vals))
"""

@style(FN, "fsum_map", "loop")
def _(c):
    return _math(c) + """
#@ fsum keeps the long sum accurate | exact-ish summation
return math.fsum(map(math.log, np.ravel(cond_probs).tolist()))
"""

@style(FN, "add_reduce", "vec")
def _(c):
    return """
$logp = np.log(np.array(cond_probs, dtype=float))
$res = np.add.reduce($logp)
return float($res)
"""

@style(FN, "wrong_log_of_product", "vec", wrong="log of the product underflows")
def _(c):
    return """
$prob = np.prod(cond_probs)
return float(np.log($prob))
"""

@style(FN, "wrong_eps", "vec", wrong="epsilon inside the log")
def _(c):
    return "return float(np.sum(np.log(np.asarray(cond_probs) + 1e-12)))\n"

FN = "perplexity"

@style(FN, "exp_neg_mean_log", "vec", obvious=True)
def _(c):
    return "return float(np.exp(-np.mean(np.log(token_probs))))\n"

@style(FN, "via_sequence_log_prob", "vec")
def _(c):
    return """
$count = len(token_probs)
#@ reuse the chain-rule sum | mean NLL from the log-prob
$mean_nll = -sequence_log_prob(token_probs) / $count
return float(np.exp($mean_nll))
"""

@style(FN, "via_from_loss", "vec")
def _(c):
    return """
$nll = -np.log(np.asarray(token_probs, dtype=float))
#@ same formula as from the loss | agree with perplexity_from_loss
return perplexity_from_loss(float($nll.mean()))
"""

@style(FN, "math_loop", "loop")
def _(c):
    return _math(c) + """
$total = 0.0
$count = 0
for $p in token_probs:
    $total -= math.log($p)
    $count += 1
return math.exp($total / $count)
"""

@style(FN, "geometric_mean", "vec")
def _(c):
    return """
$logs = np.log(np.atleast_1d(np.asarray(token_probs, dtype=np.float64)))
#@ perplexity is one over the geometric mean | 1 / geometric mean
$geo = np.exp($logs.mean())
return float(1.0 / $geo)
"""

@style(FN, "mean_of_negatives", "vec")
def _(c):
    return """
$p = np.atleast_1d(token_probs)
$avg = np.mean(-np.log($p))
return np.exp($avg).item()
"""

@style(FN, "wrong_product_power", "vec", wrong="product underflows")
def _(c):
    return """
$p = np.asarray(token_probs, dtype=float)
return float(np.prod($p) ** (-1.0 / len($p)))
"""

@style(FN, "wrong_sum_not_mean", "vec", wrong="sum instead of mean")
def _(c):
    return "return float(np.exp(-np.sum(np.log(token_probs))))\n"

FN = "perplexity_from_loss"

@style(FN, "np_exp", "vec", obvious=True)
def _(c):
    return "return float(np.exp(mean_nll))\n"

@style(FN, "math_exp", "vec", obvious=True)
def _(c):
    return _math(c) + "return math.exp(mean_nll)\n"

@style(FN, "temp_float", "vec")
def _(c):
    return """
$ppl = np.exp(float(mean_nll))
return float($ppl)
"""

@style(FN, "e_power", "vec")
def _(c):
    return _math(c) + "return float(math.e ** mean_nll)\n"

@style(FN, "item", "vec")
def _(c):
    return """
#@ perplexity is e to the mean loss | exp of nats
return np.exp(mean_nll).item()
"""

@style(FN, "np_power", "vec")
def _(c):
    return "return float(np.power(np.e, mean_nll))\n"

@style(FN, "wrong_base2", "vec", wrong="base 2 instead of e")
def _(c):
    return "return float(2 ** mean_nll)\n"

FN = "masked_cross_entropy"

@style(FN, "boolean_select", "vec")
def _(c):
    return """
$nv = logits.shape[-1]
$z = logits.reshape(-1, $nv).astype(np.float64)
$keep = np.asarray(mask).reshape(-1).astype(bool)
$M = int($keep.sum())
$grad = np.zeros_like($z)
if $M == 0:
    return 0.0, $grad.reshape(logits.shape)
#@ only the scored rows | drop the padding rows
$zs = $z[$keep]
$tgt = np.asarray(targets).reshape(-1)[$keep].astype(np.int64)
$zs = $zs - $zs.max(axis=1, keepdims=True)
$lse = np.log(np.exp($zs).sum(axis=1))
$rows = np.arange($M)
$nll = $lse - $zs[$rows, $tgt]
$p = np.exp($zs - $lse[:, None])
$p[$rows, $tgt] -= 1.0
$grad[$keep] = $p / $M
return float($nll.mean()), $grad.reshape(logits.shape)
"""

@style(FN, "weights_safe_targets", "vec")
def _(c):
    return """
$w = np.asarray(mask).astype(np.float64)
$M = $w.sum()
$z = logits.astype(np.float64)
if $M == 0:
    return 0.0, np.zeros($z.shape)
#@ padded targets may be garbage: replace them by 0, their weight is 0 anyway | safe ids at padding
$safe = np.where($w > 0, targets, 0).astype(np.int64)
$z = $z - $z.max(axis=-1, keepdims=True)
$logp = $z - np.log(np.exp($z).sum(axis=-1, keepdims=True))
$picked = np.take_along_axis($logp, $safe[..., None], axis=-1)[..., 0]
$loss = -($picked * $w).sum() / $M
$grad = np.exp($logp)
np.put_along_axis($grad, $safe[..., None], np.take_along_axis($grad, $safe[..., None], axis=-1) - 1.0, axis=-1)
$grad = $grad * ($w[..., None] / $M)
return float($loss), $grad
"""

@style(FN, "loop_bt", "loop")
def _(c):
    return """
$nb, $nt, $nv = logits.shape
$grad = np.zeros((($nb, $nt, $nv)), dtype=np.float64)
$M = 0
$total = 0.0
for $row in range($nb):
    for $t in range($nt):
        if not mask[$row, $t]:
            #@ padding: no loss, no gradient | skip padded positions
            continue
        $v = logits[$row, $t].astype(np.float64)
        $v = $v - $v.max()
        $ex = np.exp($v)
        $s = $ex.sum()
        $y = int(targets[$row, $t])
        $total += np.log($s) - $v[$y]
        $grad[$row, $t] = $ex / $s
        $grad[$row, $t, $y] -= 1.0
        $M += 1
if $M == 0:
    return 0.0, $grad
return float($total / $M), $grad / $M
"""

@style(FN, "nonzero_indices", "vec")
def _(c):
    return """
$bi, $ti = np.nonzero(np.asarray(mask))
$M = len($bi)
$grad = np.zeros(logits.shape, dtype=np.float64)
if $M == 0:
    return 0.0, $grad
$sel = logits[$bi, $ti].astype(np.float64)
$tgt = targets[$bi, $ti].astype(np.int64)
#@ stable softmax of the scored rows | subtract each row's max
$sel -= $sel.max(axis=1, keepdims=True)
$ex = np.exp($sel)
$den = $ex.sum(axis=1)
$r = np.arange($M)
$loss = np.mean(np.log($den) - $sel[$r, $tgt])
$p = $ex / $den[:, None]
$p[$r, $tgt] -= 1
$grad[$bi, $ti] = $p / $M
return float($loss), $grad
"""

@style(FN, "helper_log_softmax", "vec")
def _(c):
    c.helper('''
def $h_logsoftmax($z, axis=-1):
    $m = np.max($z, axis=axis, keepdims=True)
    #@ log-sum-exp with the max pulled out | stable normaliser
    return $z - $m - np.log(np.sum(np.exp($z - $m), axis=axis, keepdims=True))
''')
    return """
$flat_mask = np.asarray(mask).astype(bool).ravel()
$M = int(np.count_nonzero($flat_mask))
$nv = logits.shape[-1]
$grad = np.zeros((np.prod(logits.shape[:-1], dtype=int), $nv))
if $M == 0:
    return 0.0, $grad.reshape(logits.shape)
$lp = $h_logsoftmax(logits.reshape(-1, $nv)[$flat_mask].astype(np.float64))
$tgt = targets.ravel()[$flat_mask].astype(np.intp)
$tix = $tgt[:, None]
$loss = -float(np.take_along_axis($lp, $tix, axis=1).mean())
$p = np.exp($lp)
np.put_along_axis($p, $tix, np.take_along_axis($p, $tix, axis=1) - 1, axis=1)
$grad[$flat_mask] = $p / $M
return $loss, $grad.reshape(logits.shape)
"""

@style(FN, "argwhere_loop", "loop")
def _(c):
    return """
$positions = np.argwhere(np.asarray(mask) != 0)
$M = len($positions)
$grad = np.zeros(logits.shape)
$nll = []
for $row, $t in $positions:
    $v = np.asarray(logits[$row, $t], dtype=np.float64)
    $lse = $v.max() + np.log(np.sum(np.exp($v - $v.max())))
    $y = targets[$row, $t]
    $nll.append($lse - $v[$y])
    $grad[$row, $t] = np.exp($v - $lse)
    $grad[$row, $t, $y] -= 1
if $M == 0:
    return 0.0, $grad
#@ average over scored positions only | divide by M, not B*T
return float(np.mean($nll)), $grad / $M
"""

@style(FN, "wrong_divide_BT", "vec", wrong="divides by B*T")
def _(c):
    return """
$nb, $nt, $nv = logits.shape
$m2 = np.asarray(mask).astype(bool)
$safe = np.where($m2, targets, 0).astype(np.int64).reshape(-1)
$z = logits.reshape(-1, $nv).astype(np.float64)
$z = $z - $z.max(1, keepdims=True)
$logp = $z - np.log(np.exp($z).sum(1, keepdims=True))
$r = np.arange($z.shape[0])
$nll = -$logp[$r, $safe] * $m2.reshape(-1)
$loss = $nll.sum() / ($nb * $nt)
$grad = np.exp($logp)
$grad[$r, $safe] -= 1
$grad = $grad * $m2.reshape(-1, 1) / ($nb * $nt)
return float($loss), $grad.reshape(logits.shape)
"""

@style(FN, "wrong_grad_at_padding", "vec", wrong="gradient not zeroed at padding")
def _(c):
    return """
$nv = logits.shape[-1]
$keep = np.asarray(mask).reshape(-1).astype(bool)
$M = max(int($keep.sum()), 1)
$safe = np.clip(np.asarray(targets).reshape(-1), 0, $nv - 1)
$z = logits.reshape(-1, $nv).astype(np.float64)
$z -= $z.max(axis=1, keepdims=True)
$p = np.exp($z) / np.exp($z).sum(axis=1, keepdims=True)
$r = np.arange(len($safe))
$loss = -np.log($p[$r, $safe])[$keep].sum() / $M
$p[$r, $safe] -= 1
return float($loss), ($p / $M).reshape(logits.shape)
"""

FN = "tied_lm_head"

@style(FN, "matmul_T", "vec", obvious=True)
def _(c):
    return "return hidden @ E.T\n"

@style(FN, "np_matmul_transpose", "vec", obvious=True)
def _(c):
    return c.ch("return np.matmul(hidden, E.transpose())\n", """
$out = np.matmul(hidden, E.T)
return $out
""")

@style(FN, "einsum", "vec")
def _(c):
    return """
#@ contract C against the embedding rows | one score per token
return np.einsum("...c,vc->...v", hidden, E)
"""

@style(FN, "tensordot", "vec")
def _(c):
    return """
$out = np.tensordot(hidden, E, axes=([-1], [1]))
return $out
"""

@style(FN, "reshape_2d", "vec")
def _(c):
    return """
$lead = hidden.shape[:-1]
$flat = hidden.reshape(-1, hidden.shape[-1])
$out = $flat @ E.T
#@ restore the leading axes | back to (..., V)
return $out.reshape(*$lead, E.shape[0])
"""

@style(FN, "np_inner", "vec")
def _(c):
    return """
#@ inner contracts the last axis of both | hidden . E_v for every v
return np.inner(hidden, E)
"""

@style(FN, "dot", "vec")
def _(c):
    return """
$Et = E.T
$out = np.dot(hidden, $Et)
return $out
"""

FN = "greedy_next_token"

@style(FN, "argmax_inline", "vec", obvious=True)
def _(c):
    return "return int(np.argmax(h_last @ W_head))\n"

@style(FN, "dot_temporaries", "vec")
def _(c):
    return """
$scores = np.dot(h_last, W_head)
#@ softmax is monotonic, argmax of logits is enough | no softmax needed
$best = np.argmax($scores)
return int($best)
"""

@style(FN, "loop_best", "loop")
def _(c):
    return """
$scores = h_last @ W_head
$best_id = 0
$best_val = $scores[0]
for $i in range(1, len($scores)):
    #@ strict > keeps the lowest id on ties | first maximum wins
    if $scores[$i] > $best_val:
        $best_val = $scores[$i]
        $best_id = $i
return int($best_id)
"""

@style(FN, "transpose_method", "vec")
def _(c):
    return """
$scores = W_head.T @ h_last
return int($scores.argmax())
"""

@style(FN, "flatnonzero", "vec")
def _(c):
    return """
$scores = np.einsum("c,cv->v", h_last, W_head)
$top = np.flatnonzero($scores == $scores.max())
#@ lowest id among the ties | first of the maxima
return int($top[0])
"""

@style(FN, "list_index", "loop")
def _(c):
    return """
$scores = list(h_last @ W_head)
return $scores.index(max($scores))
"""

@style(FN, "wrong_softmax_overflow", "vec", wrong="softmax without max subtraction")
def _(c):
    return """
$logits = h_last @ W_head
$p = np.exp($logits) / np.exp($logits).sum()
return int(np.argmax($p))
"""

@style(FN, "wrong_numpy_int", "vec", wrong="returns a NumPy integer")
def _(c):
    return "return np.argmax(np.dot(h_last, W_head))\n"

FN = "causal_mask"

@style(FN, "triu_ones", "vec", obvious=True)
def _(c):
    return c.ch("return np.triu(np.ones((T, T), dtype=bool), k=1)\n",
                "return np.triu(np.ones((T, T), dtype=bool), 1)\n")

@style(FN, "arange_compare", "vec")
def _(c):
    return """
$idx = np.arange(T)
#@ key index greater than query index | column > row
return $idx[None, :] > $idx[:, None]
"""

@style(FN, "double_loop", "loop")
def _(c):
    return """
$m = np.zeros((T, T), dtype=bool)
for $j in range(T):
    for $k in range($j + 1, T):
        #@ future key | k > j is hidden
        $m[$j, $k] = True
return $m
"""

@style(FN, "not_tril", "vec")
def _(c):
    return """
$visible = np.tril(np.ones((T, T), dtype=bool))
return ~$visible
"""

@style(FN, "not_tri", "vec")
def _(c):
    return "return np.logical_not(np.tri(T, T, dtype=bool))\n"

@style(FN, "indices", "vec")
def _(c):
    return """
$rows, $cols = np.indices((T, T))
$m = $cols > $rows
return $m
"""

@style(FN, "row_loop", "loop")
def _(c):
    return """
$m = np.full((T, T), False)
for $j in range(T):
    $m[$j, $j + 1:] = True
return $m
"""

@style(FN, "wrong_includes_diagonal", "vec", wrong="diagonal masked too")
def _(c):
    return "return np.triu(np.ones((T, T))).astype(bool)\n"

@style(FN, "wrong_float_mask", "vec", wrong="float mask, not bool")
def _(c):
    return "return np.triu(np.ones((T, T)), 1)\n"

FN = "gpt_param_count"

@style(FN, "direct_dict", "vec")
def _(c):
    return """
$d = n_embd
$emb = vocab_size * $d + block_size * $d
$att = n_layer * (4 * $d * $d + 4 * $d)
$ffn = n_layer * (2 * $d * ffn_dim + ffn_dim + $d)
$ln = n_layer * 4 * $d
$head = 0 if tied else vocab_size * $d
return {
    "embeddings": int($emb),
    "attention": int($att),
    "ffn": int($ffn),
    "layernorm": int($ln),
    "lm_head": int($head),
    "total": int($emb + $att + $ffn + $ln + $head),
}
"""

@style(FN, "parts_then_sum", "vec")
def _(c):
    return """
$parts = {}
$parts["embeddings"] = vocab_size * n_embd + block_size * n_embd
#@ q, k, v and output projection with biases | 4 d x d matrices + 4 biases
$parts["attention"] = n_layer * 4 * (n_embd * n_embd + n_embd)
$parts["ffn"] = n_layer * (n_embd * ffn_dim + ffn_dim + ffn_dim * n_embd + n_embd)
$parts["layernorm"] = n_layer * 2 * (2 * n_embd)
$parts["lm_head"] = 0 if tied else vocab_size * n_embd
$parts = {$key: int($val) for $key, $val in $parts.items()}
$parts["total"] = sum($parts.values())
return $parts
"""

@style(FN, "layer_loop", "loop")
def _(c):
    return """
$att = $ffn = $ln = 0
for _ in range(n_layer):
    #@ one transformer block | per block
    $att += 4 * n_embd * n_embd + 4 * n_embd
    $ffn += 2 * n_embd * ffn_dim + ffn_dim + n_embd
    $ln += 4 * n_embd
$emb = (vocab_size + block_size) * n_embd
$head = 0
if not tied:
    $head = vocab_size * n_embd
$total = $emb + $att + $ffn + $ln + $head
return dict(embeddings=int($emb), attention=int($att), ffn=int($ffn),
            layernorm=int($ln), lm_head=int($head), total=int($total))
"""

@style(FN, "shapes_prod", "vec")
def _(c):
    return """
#@ list every tensor of one block by shape | shapes of one block
$block = [(n_embd, n_embd)] * 4 + [(n_embd,)] * 4
$ffn_shapes = [(n_embd, ffn_dim), (ffn_dim,), (ffn_dim, n_embd), (n_embd,)]
$ln_shapes = [(n_embd,)] * 4
$size = lambda $shapes: sum(int(np.prod($sh)) for $sh in $shapes)
$out = {
    "embeddings": $size([(vocab_size, n_embd), (block_size, n_embd)]),
    "attention": n_layer * $size($block),
    "ffn": n_layer * $size($ffn_shapes),
    "layernorm": n_layer * $size($ln_shapes),
    "lm_head": 0 if tied else vocab_size * n_embd,
}
$out["total"] = sum($out.values())
return {$key: int($val) for $key, $val in $out.items()}
"""

@style(FN, "helper_linear", "vec")
def _(c):
    c.helper('''
def $h_linear($n_in, $n_out, bias=True):
    #@ weights plus an optional bias | parameters of a dense layer
    return $n_in * $n_out + ($n_out if bias else 0)
''')
    return """
$att = 4 * $h_linear(n_embd, n_embd)
$ffn = $h_linear(n_embd, ffn_dim) + $h_linear(ffn_dim, n_embd)
$ln = 2 * (2 * n_embd)
$res = {
    "embeddings": vocab_size * n_embd + block_size * n_embd,
    "attention": n_layer * $att,
    "ffn": n_layer * $ffn,
    "layernorm": n_layer * $ln,
    "lm_head": 0 if tied else $h_linear(n_embd, vocab_size, bias=False),
}
$res["total"] = $res["embeddings"] + $res["attention"] + $res["ffn"] + $res["layernorm"] + $res["lm_head"]
return $res
"""

@style(FN, "per_block_keys", "vec")
def _(c):
    return """
$d, $f, $L = int(n_embd), int(ffn_dim), int(n_layer)
$per_block = {
    "attention": 4 * $d ** 2 + 4 * $d,
    "ffn": 2 * $d * $f + $f + $d,
    "layernorm": 4 * $d,
}
$counts = {"embeddings": (int(vocab_size) + int(block_size)) * $d}
for $key in ("attention", "ffn", "layernorm"):
    $counts[$key] = $L * $per_block[$key]
#@ tied head reuses the token table | counted once when tied
$counts["lm_head"] = 0 if tied else int(vocab_size) * $d
$counts["total"] = sum($counts.values())
return $counts
"""

@style(FN, "wrong_one_layernorm", "vec", wrong="one LayerNorm per block")
def _(c):
    return """
$d = n_embd
$res = {"embeddings": (vocab_size + block_size) * $d,
        "attention": n_layer * (4 * $d * $d + 4 * $d),
        "ffn": n_layer * (2 * $d * ffn_dim + ffn_dim + $d),
        "layernorm": n_layer * 2 * $d,
        "lm_head": 0 if tied else vocab_size * $d}
$res["total"] = sum($res.values())
return $res
"""

@style(FN, "wrong_head_bias", "vec", wrong="untied head counted with a bias")
def _(c):
    return """
$emb = vocab_size * n_embd + block_size * n_embd
$att = n_layer * (4 * n_embd * n_embd + 4 * n_embd)
$ffn = n_layer * (2 * n_embd * ffn_dim + ffn_dim + n_embd)
$ln = n_layer * 4 * n_embd
$head = 0 if tied else vocab_size * n_embd + vocab_size
return {"embeddings": $emb, "attention": $att, "ffn": $ffn, "layernorm": $ln,
        "lm_head": $head, "total": $emb + $att + $ffn + $ln + $head}
"""

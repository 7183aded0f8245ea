"""Hand-written implementation styles for the lm-head assignment.

Each style is a function of a render context ``c`` and returns the body of the
function (no def line, no docstring) with ``$role`` placeholders for local names
and ``#@ phrasing one | phrasing two`` placeholder comment lines.  ``c.ch(...)``
draws a micro-variation, ``c.helper(code)`` adds a module-level helper and
``c.imports`` collects module-level imports a student added.
"""
from registry import style

FN = "next_token_batch"

@style(FN, "stack_listcomp", "vec")
def _(c):
    arr = c.ch("np.stack", "np.array")
    if c.ch(0, 1):
        return f"""
#@ one window per start offset | slice the input rows
$xb = {arr}([data[$i:$i + block_size] for $i in ix])
#@ targets are the same windows moved right by one | shift by one for the targets
$yb = {arr}([data[$i + 1:$i + block_size + 1] for $i in ix])
return $xb, $yb
"""
    return f"""
$xb = {arr}([data[$i : $i + block_size] for $i in ix])
$yb = {arr}([data[$i + 1 : $i + 1 + block_size] for $i in ix])
#@ same dtype as data since we only slice | both (B, T)
return $xb, $yb
"""

@style(FN, "prealloc_loop", "loop")
def _(c):
    alloc = c.ch("np.empty", "np.zeros")
    return f"""
$nb = len(ix)
#@ allocate the outputs with the dtype of data | keep the dtype of the data
$xb = {alloc}(($nb, block_size), dtype=data.dtype)
$yb = {alloc}(($nb, block_size), dtype=data.dtype)
for $row, $start in enumerate(ix):
    $start = int($start)
    $xb[$row] = data[$start:$start + block_size]
    #@ the target is the next token | shifted window
    $yb[$row] = data[$start + 1:$start + block_size + 1]
return $xb, $yb
"""

@style(FN, "fancy_index_offsets", "vec")
def _(c):
    if c.ch(0, 1):
        return """
#@ build a (B, T) grid of positions | every row is start + 0..T-1
$offs = np.arange(block_size)
$pos = np.asarray(ix).reshape(-1, 1) + $offs.reshape(1, -1)
$xb = data[$pos]
$yb = data[$pos + 1]
return $xb, $yb
"""
    return """
$pos = np.asarray(ix)[:, None] + np.arange(block_size)[None, :]
#@ fancy indexing makes copies, so data stays untouched | indexing with an int array copies
return data[$pos], data[$pos + 1]
"""

@style(FN, "window_then_split", "vec")
def _(c):
    return """
#@ grab T+1 tokens per offset, then split into input and target | one extra token per row
$chunk = np.stack([data[$i:$i + block_size + 1] for $i in ix])
$xb = $chunk[:, :-1].copy()
$yb = $chunk[:, 1:].copy()
return $xb, $yb
"""

@style(FN, "sliding_window_view", "vec")
def _(c):
    if c.ch(0, 1):
        c.imports.add("from numpy.lib.stride_tricks import sliding_window_view")
        fn = "sliding_window_view"
        pre = ""
    else:
        fn = "np.lib.stride_tricks.sliding_window_view"
        pre = ""
    return pre + f"""
#@ all windows of length T+1 (a view, no copy) | every length T+1 window of the data
$win = {fn}(data, block_size + 1)
$sel = $win[np.asarray(ix)]
$xb = np.array($sel[:, :block_size])
$yb = np.array($sel[:, 1:])
return $xb, $yb
"""

@style(FN, "append_lists", "loop")
def _(c):
    return """
$xs = []
$ys = []
for $i in ix:
    $i = int($i)
    $xs.append(data[$i:$i + block_size])
    $ys.append(data[$i + 1:$i + block_size + 1])
#@ back to arrays with the original dtype | convert the lists to arrays
return np.array($xs, dtype=data.dtype), np.array($ys, dtype=data.dtype)
"""

@style(FN, "take_outer", "vec")
def _(c):
    return """
$start = np.asarray(ix, dtype=np.int64)
#@ outer sum gives the position of every (row, t) | positions[b, t] = ix[b] + t
$pos = np.add.outer($start, np.arange(block_size))
$xb = np.take(data, $pos)
$yb = np.take(data, $pos + 1)
return $xb, $yb
"""

@style(FN, "nested_elementwise", "loop")
def _(c):
    return """
$nb = len(ix)
$xb = np.zeros(($nb, block_size), dtype=data.dtype)
$yb = np.zeros(($nb, block_size), dtype=data.dtype)
for $row in range($nb):
    for $t in range(block_size):
        #@ token at offset + t and the one after it | input and its next token
        $xb[$row, $t] = data[ix[$row] + $t]
        $yb[$row, $t] = data[ix[$row] + $t + 1]
return $xb, $yb
"""

@style(FN, "wrong_no_shift", "vec", wrong="targets not shifted")
def _(c):
    return """
$xb = np.stack([data[$i:$i + block_size] for $i in ix])
#@ targets | labels
$yb = np.stack([data[$i:$i + block_size] for $i in ix])
return $xb, $yb
"""

@style(FN, "wrong_swapped", "loop", wrong="returns (yb, xb)")
def _(c):
    return """
$xs, $ys = [], []
for $i in ix:
    $xs.append(data[$i:$i + block_size])
    $ys.append(data[$i + 1:$i + block_size + 1])
return np.array($ys), np.array($xs)
"""

FN = "lm_head"

@style(FN, "matmul_op", "vec", obvious=True)
def _(c):
    if c.ch(0, 1):
        return "return hidden @ W_head + b_head\n"
    return """
$out = hidden @ W_head + b_head
return $out
"""

@style(FN, "np_matmul", "vec", obvious=True)
def _(c):
    return c.ch("""
#@ (B, T, C) @ (C, V) -> (B, T, V), bias broadcasts | matmul batches over the leading axes
return np.matmul(hidden, W_head) + b_head
""", """
$out = np.matmul(hidden, W_head)
$out = $out + b_head
return $out
""")

@style(FN, "einsum", "vec")
def _(c):
    spec = c.ch("'btc,cv->btv'", "'...c,cv->...v'", '"ijk,kl->ijl"')
    return f"""
#@ contract the width axis | sum over C
$out = np.einsum({spec}, hidden, W_head) + b_head
return $out
"""

@style(FN, "reshape_2d", "vec")
def _(c):
    return """
$nb, $nt, $nc = hidden.shape
#@ flatten to (N, C) rows | treat every position as a row
$flat = hidden.reshape($nb * $nt, $nc)
$out = $flat @ W_head + b_head
return $out.reshape($nb, $nt, -1)
"""

@style(FN, "dot_astype", "vec")
def _(c):
    return """
$out = np.dot(hidden, W_head)
$out = $out + b_head[None, None, :]
#@ make sure we return float64 | float64 for the gradient check
return $out.astype(np.float64)
"""

@style(FN, "tensordot", "vec")
def _(c):
    return """
$out = np.tensordot(hidden, W_head, axes=([-1], [0]))
$out += b_head
return $out
"""

@style(FN, "loop_positions", "loop", wrong="loops over positions (disallowed, values right)")
def _(c):
    return """
$nb, $nt, _ = hidden.shape
$out = np.zeros(($nb, $nt, W_head.shape[1]))
for $row in range($nb):
    for $t in range($nt):
        $out[$row, $t] = hidden[$row, $t] @ W_head + b_head
return $out
"""

@style(FN, "wrong_no_bias", "vec", wrong="forgets the bias")
def _(c):
    return "return hidden @ W_head\n"

FN = "softmax"

@style(FN, "max_exp_sum", "vec")
def _(c):
    mx = c.ch("np.max(x, axis=axis, keepdims=True)", "x.max(axis=axis, keepdims=True)", "np.amax(x, axis=axis, keepdims=True)")
    return f"""
#@ subtract the max for numerical stability | shift so the largest score is 0
$shifted = x - {mx}
$ex = np.exp($shifted)
return $ex / np.sum($ex, axis=axis, keepdims=True)
"""

@style(FN, "chain_inplace_div", "vec")
def _(c):
    return """
$ex = np.exp(x - x.max(axis=axis, keepdims=True))
#@ normalise | divide by the sum along the axis
$ex /= $ex.sum(axis=axis, keepdims=True)
return $ex
"""

@style(FN, "logsumexp", "vec")
def _(c):
    return """
$m = np.max(x, axis=axis, keepdims=True)
#@ log of the normaliser, computed stably | logsumexp trick
$lse = $m + np.log(np.sum(np.exp(x - $m), axis=axis, keepdims=True))
return np.exp(x - $lse)
"""

@style(FN, "moveaxis_rows_loop", "loop")
def _(c):
    return """
#@ move the softmax axis last and walk over the rows | work on rows of a 2-D view
$moved = np.moveaxis(x, axis, -1)
$flat = $moved.reshape(-1, $moved.shape[-1])
$res = np.empty_like($flat)
for $r in range($flat.shape[0]):
    $row = $flat[$r]
    $z = np.exp($row - $row.max())
    $res[$r] = $z / $z.sum()
return np.moveaxis($res.reshape($moved.shape), -1, axis)
"""

@style(FN, "apply_along_axis_helper", "loop")
def _(c):
    c.helper('''
def $h_rowsoftmax($v):
    #@ softmax of one 1-D vector | one row
    $z = np.exp($v - np.max($v))
    return $z / np.sum($z)
''')
    return """
return np.apply_along_axis($h_rowsoftmax, axis, x)
"""

@style(FN, "out_buffers", "vec")
def _(c):
    return """
#@ new array, so x is not modified | work in a fresh buffer
$res = np.subtract(x, np.amax(x, axis=axis, keepdims=True))
np.exp($res, out=$res)
$res /= np.sum($res, axis=axis, keepdims=True)
return $res
"""

@style(FN, "expand_dims", "vec")
def _(c):
    return """
$m = np.expand_dims(np.max(x, axis=axis), axis)
$ex = np.exp(x - $m)
$tot = np.expand_dims($ex.sum(axis=axis), axis)
#@ multiply by the reciprocal | probabilities
return $ex * (1 / $tot)
"""

@style(FN, "wrong_global_max", "vec", wrong="one global max")
def _(c):
    return """
#@ stability | subtract max
$ex = np.exp(x - np.max(x))
return $ex / np.sum($ex, axis=axis, keepdims=True)
"""

@style(FN, "wrong_unstable", "vec", wrong="no max subtraction")
def _(c):
    return """
$ex = np.exp(x)
return $ex / $ex.sum(axis=axis, keepdims=True)
"""

FN = "cross_entropy_loss"

@style(FN, "flatten_call_softmax", "vec")
def _(c):
    return """
$nb, $nt, $nv = logits.shape
$N = $nb * $nt
#@ flatten to (N, V) | one row per position
$probs = softmax(logits.reshape($N, $nv).astype(np.float64), axis=-1)
$rows = np.arange($N)
$tgt = targets.reshape($N)
#@ pick the probability of the right token | gather target probabilities
$loss = -np.mean(np.log($probs[$rows, $tgt]))
$grad = $probs.copy()
$grad[$rows, $tgt] -= 1.0
$grad /= $N
return float($loss), $grad.reshape(logits.shape)
"""

@style(FN, "log_softmax_inline", "vec")
def _(c):
    ax = c.ch("1", "-1", "axis=1")
    return f"""
$nv = logits.shape[-1]
$z = logits.astype(np.float64).reshape(-1, $nv)
#@ log-softmax with the max trick | stable log probabilities
$z = $z - $z.max({ax}, keepdims=True)
$logp = $z - np.log(np.exp($z).sum({ax}, keepdims=True))
$N = $z.shape[0]
$tgt = targets.reshape(-1)
$loss = -$logp[np.arange($N), $tgt].sum() / $N
$grad = np.exp($logp)
$grad[np.arange($N), $tgt] -= 1
return float($loss), ($grad / $N).reshape(logits.shape)
"""

@style(FN, "loop_positions", "loop")
def _(c):
    return """
$nv = logits.shape[-1]
$flat = logits.reshape(-1, $nv).astype(float)
$tgt = targets.reshape(-1)
$N = $flat.shape[0]
$grad = np.zeros_like($flat)
$total = 0.0
for $k in range($N):
    $row = $flat[$k]
    $m = $row.max()
    $ex = np.exp($row - $m)
    $s = $ex.sum()
    #@ -log p[target] computed in log space | nll of this position
    $total += np.log($s) - ($row[$tgt[$k]] - $m)
    $grad[$k] = $ex / $s
    $grad[$k, $tgt[$k]] -= 1.0
$grad /= $N
return float($total / $N), $grad.reshape(logits.shape)
"""

@style(FN, "helper_log_softmax", "vec")
def _(c):
    c.helper('''
def $h_logsoftmax($z):
    #@ stable log-softmax over the last axis | log of softmax without overflow
    $zm = $z - np.max($z, axis=-1, keepdims=True)
    return $zm - np.log(np.sum(np.exp($zm), axis=-1, keepdims=True))
''')
    return """
$lp = $h_logsoftmax(np.asarray(logits, dtype=np.float64))
$lp2 = $lp.reshape(-1, $lp.shape[-1])
$tgt = np.asarray(targets).ravel()
$N = $lp2.shape[0]
$idx = np.arange($N)
$loss = -np.mean($lp2[$idx, $tgt])
#@ gradient: softmax minus one-hot, over N | dL/dz = (p - y) / N
$grad = np.exp($lp2)
$grad[$idx, $tgt] = $grad[$idx, $tgt] - 1
$grad = $grad / $N
return float($loss), $grad.reshape(logits.shape)
"""

@style(FN, "take_along_axis", "vec")
def _(c):
    return """
$z = logits.astype(np.float64)
$z = $z - $z.max(axis=-1, keepdims=True)
$lse = np.log(np.exp($z).sum(axis=-1, keepdims=True))
$logp = $z - $lse
$tix = targets.astype(np.int64)[..., None]
#@ log-probability of each target, no flattening needed | gather along the vocab axis
$picked = np.take_along_axis($logp, $tix, axis=-1)[..., 0]
$N = $picked.size
$loss = -$picked.mean()
$grad = np.exp($logp)
np.put_along_axis($grad, $tix, np.take_along_axis($grad, $tix, axis=-1) - 1.0, axis=-1)
return float($loss), $grad / $N
"""

@style(FN, "onehot_rows", "vec")
def _(c):
    return """
$shape = logits.shape
$nv = $shape[-1]
$z = np.array(logits, dtype=np.float64).reshape(-1, $nv)
$N = len($z)
$z -= $z.max(axis=1, keepdims=True)
$ex = np.exp($z)
$sums = $ex.sum(axis=1, keepdims=True)
$probs = $ex / $sums
$logp = $z - np.log($sums)
#@ one-hot of shape (N, V), never V x V | targets as one-hot rows
$onehot = np.zeros_like($probs)
$onehot[np.arange($N), targets.reshape(-1)] = 1.0
$loss = -np.sum($onehot * $logp) / $N
$grad = ($probs - $onehot) / $N
return float($loss), $grad.reshape($shape)
"""

@style(FN, "nested_bt_softmax", "loop")
def _(c):
    return """
$nb, $nt, $nv = logits.shape
$N = $nb * $nt
$loss = 0.0
$grad = np.zeros(logits.shape, dtype=np.float64)
for $row in range($nb):
    for $t in range($nt):
        $p = softmax(logits[$row, $t].astype(np.float64))
        $c = int(targets[$row, $t])
        $loss -= np.log($p[$c])
        #@ softmax minus one at the target | local gradient
        $p[$c] -= 1.0
        $grad[$row, $t] = $p / $N
return float($loss / $N), $grad
"""

@style(FN, "wrong_missing_1_over_N", "vec", wrong="gradient missing 1/N")
def _(c):
    return """
$nv = logits.shape[-1]
$probs = softmax(logits.reshape(-1, $nv).astype(np.float64))
$tgt = targets.reshape(-1)
$N = $probs.shape[0]
$loss = -np.log($probs[np.arange($N), $tgt]).mean()
$grad = $probs.copy()
$grad[np.arange($N), $tgt] -= 1
return float($loss), $grad.reshape(logits.shape)
"""

@style(FN, "wrong_eps_in_log", "vec", wrong="epsilon inside the log")
def _(c):
    return """
$nv = logits.shape[-1]
$probs = softmax(logits.reshape(-1, $nv).astype(np.float64))
$tgt = targets.reshape(-1)
$N = len($tgt)
#@ avoid log(0) | add a small epsilon
$loss = -np.mean(np.log($probs[np.arange($N), $tgt] + 1e-9))
$probs[np.arange($N), $tgt] -= 1
return float($loss), $probs.reshape(logits.shape) / $N
"""

@style(FN, "wrong_eye_onehot", "vec", wrong="np.eye(V) one-hot (V x V memory)")
def _(c):
    return """
$nv = logits.shape[-1]
$probs = softmax(logits.astype(np.float64), axis=-1)
$onehot = np.eye($nv)[targets]
$N = targets.size
$loss = -np.sum($onehot * np.log($probs)) / $N
return float($loss), ($probs - $onehot) / $N
"""

FN = "lm_head_backward"

@style(FN, "reshape_matmul", "vec")
def _(c):
    return """
$nc = hidden.shape[-1]
$nv = W_head.shape[1]
#@ flatten the batch axes into N rows | (N, C) and (N, V)
$h2 = hidden.reshape(-1, $nc)
$d2 = dlogits.reshape(-1, $nv)
$dW = $h2.T @ $d2
$db = $d2.sum(axis=0)
$dh = dlogits @ W_head.T
return $dW, $db, $dh
"""

@style(FN, "einsum", "vec")
def _(c):
    l = c.ch(("btc,btv->cv", "btv->v", "btv,cv->btc"), ("ijc,ijv->cv", "ijv->v", "ijv,cv->ijc"))
    return f"""
#@ sum over batch and time for the weights | W is shared, so sum all positions
$dW = np.einsum('{l[0]}', hidden, dlogits)
$db = np.einsum('{l[1]}', dlogits)
$dh = np.einsum('{l[2]}', dlogits, W_head)
return $dW, $db, $dh
"""

@style(FN, "tensordot", "vec")
def _(c):
    return """
$dW = np.tensordot(hidden, dlogits, axes=([0, 1], [0, 1]))
$db = dlogits.sum(axis=(0, 1))
#@ back into the hidden states | contract V with W's second axis
$dh = np.tensordot(dlogits, W_head, axes=([2], [1]))
return $dW, $db, $dh
"""

@style(FN, "loop_outer", "loop")
def _(c):
    return """
$nb, $nt, $nc = hidden.shape
$dW = np.zeros(W_head.shape)
$db = np.zeros(W_head.shape[1])
$dh = np.zeros((($nb, $nt, $nc)))
for $row in range($nb):
    for $t in range($nt):
        #@ every position adds its outer product | accumulate over positions
        $dW += np.outer(hidden[$row, $t], dlogits[$row, $t])
        $db += dlogits[$row, $t]
        $dh[$row, $t] = W_head @ dlogits[$row, $t]
return $dW, $db, $dh
"""

@style(FN, "loop_batch", "loop")
def _(c):
    return """
$dW = np.zeros_like(W_head, dtype=np.float64)
$db = np.zeros(W_head.shape[1], dtype=np.float64)
$dh = np.empty(hidden.shape, dtype=np.float64)
for $row in range(hidden.shape[0]):
    $dW += hidden[$row].T @ dlogits[$row]
    $db += dlogits[$row].sum(axis=0)
    $dh[$row] = dlogits[$row] @ W_head.T
return $dW, $db, $dh
"""

@style(FN, "dot_ones", "vec")
def _(c):
    return """
$N = hidden.shape[0] * hidden.shape[1]
$hf = hidden.reshape($N, -1)
$df = dlogits.reshape($N, -1)
$dW = np.dot($hf.T, $df)
#@ row of ones sums the N rows | db is the column sum
$db = np.ones($N) @ $df
$dh = np.dot($df, W_head.T).reshape(hidden.shape)
return $dW, $db, $dh
"""

@style(FN, "matmul_transpose", "vec")
def _(c):
    return """
$df = dlogits.reshape(-1, dlogits.shape[-1])
$hf = hidden.reshape(-1, hidden.shape[-1])
$grads_W = np.matmul($hf.transpose(), $df)
$grads_b = np.add.reduce($df, axis=0)
$grads_h = np.matmul(dlogits, W_head.transpose())
return $grads_W, $grads_b, $grads_h
"""

@style(FN, "wrong_transposed_dW", "vec", wrong="dW transposed (d.T @ h).T mixup")
def _(c):
    return """
$nc = hidden.shape[-1]
$h2 = hidden.reshape(-1, $nc)
$d2 = dlogits.reshape(-1, dlogits.shape[-1])
$dW = ($d2.T @ $h2).reshape(W_head.shape)
$db = $d2.sum(0)
$dh = dlogits @ W_head.T
return $dW, $db, $dh
"""

@style(FN, "wrong_db_mean", "vec", wrong="db is a mean")
def _(c):
    return """
$h2 = hidden.reshape(-1, hidden.shape[-1])
$d2 = dlogits.reshape(-1, dlogits.shape[-1])
return $h2.T @ $d2, $d2.mean(axis=0), dlogits @ W_head.T
"""

FN = "numerical_gradient"

@style(FN, "nditer", "loop")
def _(c):
    return """
$grad = np.zeros(x.shape, dtype=np.float64)
$it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
while not $it.finished:
    $idx = $it.multi_index
    $old = x[$idx]
    x[$idx] = $old + eps
    $fp = f(x)
    x[$idx] = $old - eps
    $fm = f(x)
    #@ put it back exactly | restore the original value
    x[$idx] = $old
    $grad[$idx] = ($fp - $fm) / (2 * eps)
    $it.iternext()
return $grad
"""

@style(FN, "ndindex", "loop")
def _(c):
    return """
$grad = np.zeros(x.shape)
for $idx in np.ndindex(*x.shape):
    $old = float(x[$idx])
    x[$idx] = $old + eps
    $fp = f(x)
    x[$idx] = $old - eps
    $fm = f(x)
    x[$idx] = $old
    #@ central difference | O(eps^2) accurate
    $grad[$idx] = ($fp - $fm) / (2.0 * eps)
return $grad
"""

@style(FN, "itertools_product", "loop")
def _(c):
    if c.ch(0, 1):
        c.imports.add("import itertools")
        pre = ""
    else:
        pre = "import itertools\n\n"
    return pre + """
$grad = np.zeros_like(x, dtype=float)
for $idx in itertools.product(*(range($sz) for $sz in x.shape)):
    $saved = x[$idx]
    x[$idx] = $saved + eps
    $up = f(x)
    x[$idx] = $saved - eps
    $down = f(x)
    x[$idx] = $saved
    $grad[$idx] = ($up - $down) / (2 * eps)
return $grad
"""

@style(FN, "unravel_index", "loop")
def _(c):
    return """
$grad = np.empty(x.shape, dtype=np.float64)
for $k in range(x.size):
    $idx = np.unravel_index($k, x.shape)
    $old = x[$idx].copy()
    #@ nudge up, evaluate, nudge down, evaluate | two evaluations per entry
    x[$idx] = $old + eps
    $fp = f(x)
    x[$idx] = $old - eps
    $fm = f(x)
    x[$idx] = $old
    $grad[$idx] = ($fp - $fm) / (2 * eps)
return $grad
"""

@style(FN, "helper_eval_at", "loop")
def _(c):
    c.helper('''
def $h_evalat(f, x, $idx, $val):
    #@ evaluate f with one entry of x set to val | f at a moved point
    x[$idx] = $val
    return f(x)
''')
    return """
$grad = np.zeros(x.shape, dtype=np.float64)
for $idx in np.ndindex(x.shape):
    $orig = x[$idx]
    $fp = $h_evalat(f, x, $idx, $orig + eps)
    $fm = $h_evalat(f, x, $idx, $orig - eps)
    x[$idx] = $orig
    $grad[$idx] = ($fp - $fm) / (2 * eps)
return $grad
"""

@style(FN, "copy_restore", "loop")
def _(c):
    return """
#@ keep a copy so every entry can be restored exactly | backup of x
$backup = x.copy()
$grad = np.zeros_like($backup, dtype=np.float64)
$k = 0
$total = x.size
while $k < $total:
    $idx = tuple(int($q) for $q in np.unravel_index($k, x.shape))
    x[$idx] = $backup[$idx] + eps
    $fp = f(x)
    x[$idx] = $backup[$idx] - eps
    $fm = f(x)
    x[$idx] = $backup[$idx]
    $grad[$idx] = ($fp - $fm) / (2 * eps)
    $k += 1
return $grad
"""

@style(FN, "flat_iterator", "loop")
def _(c):
    return """
$grad = np.zeros(x.shape, dtype=np.float64)
#@ x.flat writes through to x even for a transposed view | flat indexing on the view itself
for $k in range(x.size):
    $old = x.flat[$k]
    x.flat[$k] = $old + eps
    $fp = f(x)
    x.flat[$k] = $old - eps
    $fm = f(x)
    x.flat[$k] = $old
    $grad.flat[$k] = ($fp - $fm) / (2 * eps)
return $grad
"""

@style(FN, "wrong_forward_diff", "loop", wrong="one-sided difference")
def _(c):
    return """
$grad = np.zeros(x.shape)
$base = f(x)
for $idx in np.ndindex(x.shape):
    $old = x[$idx]
    x[$idx] = $old + eps
    $grad[$idx] = (f(x) - $base) / eps
    x[$idx] = $old
return $grad
"""

@style(FN, "wrong_inexact_restore", "loop", wrong="restores by += / -= (not exact)")
def _(c):
    return """
$grad = np.zeros(x.shape)
for $idx in np.ndindex(x.shape):
    x[$idx] += eps
    $fp = f(x)
    x[$idx] -= 2 * eps
    $fm = f(x)
    x[$idx] += eps
    $grad[$idx] = ($fp - $fm) / (2 * eps)
return $grad
"""

@style(FN, "wrong_reshape_copy", "loop", wrong="perturbs x.reshape(-1), a copy for non-contiguous x")
def _(c):
    return """
$flat = x.reshape(-1)
$grad = np.zeros($flat.shape[0])
for $k in range($flat.shape[0]):
    $old = $flat[$k]
    $flat[$k] = $old + eps
    $fp = f(x)
    $flat[$k] = $old - eps
    $fm = f(x)
    $flat[$k] = $old
    $grad[$k] = ($fp - $fm) / (2 * eps)
return $grad.reshape(x.shape)
"""

FN = "max_rel_err"

@style(FN, "one_liner", "vec", obvious=True)
def _(c):
    mx = c.ch("np.max", "np.amax")
    return f"return float({mx}(np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))\n"

@style(FN, "temporaries", "vec")
def _(c):
    return """
$diff = np.abs(a - n)
$scale = np.maximum(np.abs(a), np.abs(n))
#@ guard against 0/0 | 1e-12 keeps zero entries finite
$rel = $diff / ($scale + 1e-12)
return float($rel.max())
"""

@style(FN, "zip_loop", "loop")
def _(c):
    return """
$worst = 0.0
for $u, $v in zip(np.ravel(a), np.ravel(n)):
    $e = abs($u - $v) / (max(abs($u), abs($v)) + 1e-12)
    if $e > $worst:
        $worst = $e
return float($worst)
"""

@style(FN, "fmax_item", "vec")
def _(c):
    return """
$aa = np.asarray(a, dtype=np.float64)
$nn = np.asarray(n, dtype=np.float64)
return (np.abs($aa - $nn) / (np.fmax(np.abs($aa), np.abs($nn)) + 1e-12)).max().item()
"""

@style(FN, "stack_max", "vec")
def _(c):
    return """
#@ elementwise max of abs(a) and abs(n) | denominator
$den = np.stack([np.abs(a), np.abs(n)]).max(axis=0) + 1e-12
$num = np.abs(a - n)
return float(np.max($num / $den))
"""

@style(FN, "where_bigger", "vec")
def _(c):
    return """
$abs_a = np.abs(a)
$abs_n = np.abs(n)
$bigger = np.where($abs_a > $abs_n, $abs_a, $abs_n)
$rel = np.divide(np.abs(a - n), $bigger + 1e-12)
return float(np.amax($rel))
"""

@style(FN, "wrong_no_guard", "vec", wrong="no 1e-12 guard (0/0 -> nan)")
def _(c):
    return """
$rel = np.abs(a - n) / np.maximum(np.abs(a), np.abs(n))
return float(np.max($rel))
"""

@style(FN, "wrong_sum_denominator", "vec", wrong="|a| + |n| denominator")
def _(c):
    return """
return float(np.max(np.abs(a - n) / (np.abs(a) + np.abs(n) + 1e-12)))
"""

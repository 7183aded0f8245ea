"""Synonym pools for every local-name role used by the styles.  A student's name
for a role is drawn once per student (from the student's names seed), so one
student names things consistently across functions; a renaming disguise redraws."""
_P = """
Et: Et E_T emb_T ET
L: L layers n_blocks nl
M: M n_scored num_scored count_scored m_count
N: N n_pos num_rows n_rows total_positions BT
aa: aa a64 a_arr av
abs_a: abs_a a_abs mag_a
abs_n: abs_n n_abs mag_n
att: att attention attn n_att attn_params
avg: avg mean_neg_log average avg_nll
backup: backup x_orig original saved_x x0
base: base f0 fx base_val
best: best best_idx winner choice
best_id: best_id best_idx argbest top_id
best_val: best_val best_score top_val max_val
bi: bi b_idx rows_idx batch_ids
bigger: bigger larger mx denom
block: block attn_shapes block_shapes
c: c target_id cls y_true
chunk: chunk windows blocks seqs
cols: cols col_idx kk
count: count n_tokens num length
counts: counts result res_counts params
d: d width emb_dim dm
d2: d2 dl2 dlog_flat grad_flat
dW: dW dW_head grad_W dw
db: db db_head grad_b dbias
df: df dflat d_2d
dh: dh dhidden grad_h d_hidden
diff: diff delta abs_diff err
den: den denominator den_arr
down: down f_minus minus loss_down
e: e err rel_e cur
emb: emb embeddings n_emb emb_params
ex: ex exps e_x exp_vals unnorm
f: f ff f_dim hidden_ffn
ffn: ffn n_ffn mlp ffn_params
ffn_shapes: ffn_shapes mlp_shapes ffn_list
flat: flat x2d rows2d flat_view
flat_mask: flat_mask m_flat keep_flat
fm: fm f_minus loss_minus minus_val lo
fp: fp f_plus loss_plus plus_val hi
geo: geo gmean geo_mean
grad: grad g gradient grad_out
grads_W: grads_W gW dWeight
grads_b: grads_b gb dBias
grads_h: grads_h gh dHidden
h2: h2 hflat h_2d hidden_flat
h_evalat: _eval_at eval_with f_at evaluate_at
h_linear: linear_params _dense dense_count n_linear
h_logsoftmax: log_softmax _log_softmax logsoftmax stable_log_softmax
h_rowsoftmax: _softmax_1d row_softmax softmax_vec softmax1d
head: head lm head_params n_head
hf: hf hflat h_rows
i: i start s0 off
idx: idx index pos_idx ii
it: it iterator itr
j: j q_i qi
k: k kk key_i ki
keep: keep scored valid is_scored sel_mask
key: key name part
lead: lead lead_shape batch_shape prefix
ln: ln layernorm ln_params n_ln
ln_shapes: ln_shapes norm_shapes ln_list
logits: logits scores_v z_out
logp: logp log_probs logprobs lp_all
logs: logs log_p log_vals lps
loss: loss total_loss nll_mean L_val
lp: lp logp2 log_prob lsm
lp2: lp2 lp_flat logp_rows
lse: lse log_norm logsum log_z
m: m mx row_max maxes
m2: m2 mbool mask_b
mean_nll: mean_nll avg_nll nll_avg
moved: moved xt x_last
n_in: n_in fan_in d_in
n_out: n_out fan_out d_out
nb: nb B n_batch bsz batch
nc: nc C width n_ch
nll: nll nlls losses neg_logp
nn: nn n64 n_arr nv_arr
nt: nt T n_time seq_len
num: num numer abs_err
nv: nv V vocab n_vocab
offs: offs offsets steps ar
old: old orig_val prev keep_val x_old
onehot: onehot one_hot y_onehot targets_1h
orig: orig original_value x_i before
out: out logits_out result y res
p: p probs_v pr prob_row
parts: parts counts_d breakdown
per_block: per_block block_counts one_block
picked: picked target_logp chosen lp_target
pos: pos positions idx_grid where
positions: positions scored_pos coords
ppl: ppl perp value
prob: prob joint p_all
probs: probs P p_all softmax_out sm
q: q i_ coord
r: r ar idx_rows rr
rel: rel ratio relative rel_err
res: res out_arr result_arr buf
row: row b bi_ b_i
rows: rows ar_n row_idx arange_n
s: s denom total_exp z_sum
safe: safe safe_t t_safe tg_safe
saved: saved tmp_val original_entry
scale: scale denom mag
scores: scores logits_v vals scores_all
sel: sel picked_rows windows_sel
sh: sh shp dims
shape: shape orig_shape in_shape
shapes: shapes shp_list tensors
shifted: shifted z x_shift stable
size: size n_params count_of
start: start s idx0 offset
sz: sz dim extent n_dim
sums: sums denom row_sums z
t: t j_t pos_t tt
tgt: tgt y t_flat labels target_ids
ti: ti t_idx time_ids
tix: tix tidx idx_t
top: top ties maxima
tot: tot denom_ sum_e normaliser
total: total acc running total_nll
u: u ai val_a
up: up f_up loss_up
v: v vec row_v logit_row
val: val value count_v
vals: vals flat_vals pvec
visible: visible allowed lower
w: w weights wmask
win: win windows all_windows
worst: worst best_err max_err
xb: xb x_batch inputs X xs_arr
xs: xs inputs_list x_rows
y: y target label yy
yb: yb y_batch targets_b Y ys_arr
ys: ys targets_list y_rows
z: z shifted_z zz logits2
zm: zm z_shift zc
zs: zs z_sel scored_logits
"""
NAMES = {}
for line in _P.strip().splitlines():
    role, rest = line.split(":", 1)
    NAMES[role.strip()] = rest.split()

TEMP_NAMES = ["result", "ret", "answer", "output", "retval", "final"]

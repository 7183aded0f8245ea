"""Do the reference solutions reproduce every number the course documents print?

Each expected value below is a number printed in the seeds; everything else is
computed by ``solutions``.
"""
import numpy as np
import pytest

import solutions as S
from autograder.runtime.gradcheck import projection_check

max_rel_err, numerical_gradient = S.max_rel_err, S.numerical_gradient

# ---------------------------------------------------------------- seed 000

@pytest.fixture(scope="module")
def lesson():
    """The lesson's seed-42 batch, drawn exactly as the lesson draws it."""
    stoi, itos = S.build_vocab()
    data = S.encode(S.CORPUS, stoi)
    rng = np.random.default_rng(42)
    B, T, C = 4, 8, 16
    ix = rng.integers(0, len(data) - T - 1, size=B)
    xb, yb = S.next_token_batch(data, ix, T)
    hidden = rng.standard_normal((B, T, C))
    W_head = rng.standard_normal((C, len(stoi))) * 0.02
    b_head = np.zeros(len(stoi))
    return dict(stoi=stoi, itos=itos, data=data, xb=xb, yb=yb, hidden=hidden,
                W_head=W_head, b_head=b_head, B=B, T=T, C=C, V=len(stoi))


def test_corpus_has_24_characters_and_10020_tokens(lesson):
    assert len(lesson["stoi"]) == 24
    assert len(lesson["data"]) == 10020
    assert lesson["data"].dtype == np.int64


def test_seed42_batch_targets_are_inputs_shifted_by_one(lesson):
    assert lesson["xb"].shape == (4, 8) and lesson["yb"].shape == (4, 8)
    assert S.decode(lesson["xb"][0], lesson["itos"]) == ". the ke"
    assert S.decode(lesson["yb"][0], lesson["itos"]) == " the kee"
    np.testing.assert_array_equal(lesson["xb"][:, 1:], lesson["yb"][:, :-1])


def test_random_head_loss_matches_lesson_and_uniform_baseline(lesson):
    logits = S.lm_head(lesson["hidden"], lesson["W_head"], lesson["b_head"])
    assert logits.shape == (4, 8, 24) and logits.dtype == np.float64
    loss, dlogits = S.cross_entropy_loss(logits, lesson["yb"])
    assert round(loss, 6) == 3.179347
    assert round(float(np.log(24)), 6) == 3.178054
    assert dlogits.shape == (4, 8, 24)


def test_gradients_pass_the_float64_numerical_check(lesson):
    hidden, W, b, yb = lesson["hidden"], lesson["W_head"].copy(), lesson["b_head"].copy(), lesson["yb"]
    logits = S.lm_head(hidden, W, b)
    _, dlogits = S.cross_entropy_loss(logits, yb)
    dW, db, dh = S.lm_head_backward(hidden, W, dlogits)
    assert dW.shape == (16, 24) and db.shape == (24,) and dh.shape == (4, 8, 16)

    num_dlogits = numerical_gradient(lambda z: S.cross_entropy_loss(z, yb)[0], logits.copy())
    num_dW = numerical_gradient(lambda w: S.cross_entropy_loss(S.lm_head(hidden, w, b), yb)[0], W)
    num_db = numerical_gradient(lambda c: S.cross_entropy_loss(S.lm_head(hidden, W, c), yb)[0], b)
    assert max_rel_err(dlogits, num_dlogits) < 1e-4
    assert max_rel_err(dW, num_dW) < 1e-4
    assert max_rel_err(db, num_db) < 1e-4
    # the lesson's absolute agreement check as well
    assert np.allclose(dlogits, num_dlogits, atol=1e-7)
    # dhidden's entries are ~1e-5, where elementwise relative error is dominated
    # by round-off, so it is checked along random directions instead
    f_h = lambda h: S.cross_entropy_loss(S.lm_head(h, W, b), yb)[0]
    for seed in range(3):
        assert projection_check(f_h, hidden, np.random.default_rng(seed), grad=dh).passed


def test_exercise1_confident_logits_give_loss_near_zero(lesson):
    logits = S.lm_head(lesson["hidden"], lesson["W_head"], lesson["b_head"])
    onehot = np.eye(24)[lesson["yb"]]
    loss, _ = S.cross_entropy_loss(logits + 50.0 * onehot, lesson["yb"])
    assert 0.0 <= loss < 1e-15 * 1e6  # exp(-50)*23 ≈ 4e-21, far below 1e-9


def test_exercise2_dlogits_sums_to_zero_per_position(lesson):
    logits = S.lm_head(lesson["hidden"], lesson["W_head"], lesson["b_head"])
    _, dlogits = S.cross_entropy_loss(logits, lesson["yb"])
    np.testing.assert_allclose(dlogits.sum(axis=-1), 0.0, atol=1e-15)


@pytest.mark.parametrize("constant", [0.0, -3.5, 1000.0])
def test_exercise3_equal_logits_give_exactly_log_v(lesson, constant):
    targets = np.random.default_rng(7).integers(0, 24, size=(4, 8))
    loss, _ = S.cross_entropy_loss(np.full((4, 8, 24), constant), targets)
    assert loss == pytest.approx(np.log(24), abs=1e-14)


# ---------------------------------------------------------------- seed 004

def test_chain_rule_full_history_and_bigram():
    full, bigram = [0.4, 0.6, 0.5], [0.4, 0.3, 0.2]
    assert round(float(np.exp(S.sequence_log_prob(full))), 6) == 0.12
    assert round(S.sequence_log_prob(full), 6) == -2.120264
    assert round(float(np.exp(S.sequence_log_prob(bigram))), 6) == 0.024
    assert round(S.sequence_log_prob(bigram), 6) == -3.729701


def test_perplexity_both_ways():
    probs = [0.8, 0.5, 0.25]
    mean_ce = -S.sequence_log_prob(probs) / 3
    assert round(mean_ce, 6) == 0.767528
    assert round(S.perplexity(probs), 6) == 2.154435
    assert round(S.perplexity_from_loss(mean_ce), 6) == 2.154435
    assert S.perplexity([0.25] * 4) == pytest.approx(4.0)  # uniform over four tokens


def test_shifted_next_token_cross_entropy():
    logits = np.array([[[2., 0., -1.], [0., 1., 2.], [1., 0., 2.]]])
    target = np.array([[0, 1, 2]])
    loss, _ = S.cross_entropy_loss(logits[:, :-1], target[:, 1:])
    assert round(loss, 6) == 1.288726
    # the masked form scores the same positions when the last one is padding
    mask = np.array([[True, True, False]])
    shifted_targets = np.array([[1, 2, 0]])
    mloss, mgrad = S.masked_cross_entropy(logits, shifted_targets, mask)
    assert round(mloss, 6) == 1.288726
    assert np.all(mgrad[0, 2] == 0.0)


def test_causal_mask_blocks_ten_pairs_for_five_positions():
    mask = S.causal_mask(5)
    assert mask.shape == (5, 5) and mask.dtype == bool
    assert int(mask.sum()) == 10
    assert not mask.diagonal().any()


def _causal_attention_logits(tokens, emb, W_out):
    """A one-layer causal self-attention model, as in the seed's torch example."""
    h = emb[tokens]                                            # (B, T, d)
    scores = h @ h.transpose(0, 2, 1) / np.sqrt(h.shape[-1])   # (B, T, T)
    scores = np.where(S.causal_mask(tokens.shape[1]), -np.inf, scores)
    return S.softmax(scores, axis=-1) @ h @ W_out              # (B, T, V)


def test_changing_future_tokens_leaves_earlier_logits_unchanged():
    rng = np.random.default_rng(42)
    emb, W_out = rng.standard_normal((20, 8)), rng.standard_normal((8, 20))
    a, b = np.array([[1, 2, 3, 4]]), np.array([[1, 2, 9, 8]])
    la, lb = _causal_attention_logits(a, emb, W_out), _causal_attention_logits(b, emb, W_out)
    assert np.max(np.abs(la[:, :2] - lb[:, :2])) == 0.0
    assert np.max(np.abs(la[:, 2:] - lb[:, 2:])) > 0.0   # the change is visible where allowed


def test_gpt1_parameter_count_under_the_course_convention():
    counts = S.gpt_param_count(vocab_size=40478, block_size=512, n_embd=768, n_layer=12, ffn_dim=3072)
    assert counts["embeddings"] == 31_480_320
    assert counts["attention"] == 28_348_416
    assert counts["ffn"] == 56_669_184
    assert counts["layernorm"] == 36_864
    assert counts["total"] == 116_534_784
    untied = S.gpt_param_count(40478, 512, 768, 12, 3072, tied=False)
    assert untied["total"] - counts["total"] == 31_087_104
    assert all(type(v) is int for v in counts.values())


def test_greedy_next_token_uses_the_argmax_of_logits():
    rng = np.random.default_rng(3)
    h_last, W = rng.standard_normal(4), rng.standard_normal((4, 6))
    token = S.greedy_next_token(h_last, W)
    assert type(token) is int
    logits = h_last @ W
    assert all(logits[token] >= logits)


def test_tied_head_uses_the_embedding_transpose():
    rng = np.random.default_rng(5)
    hidden, E = rng.standard_normal((2, 3, 8)), rng.standard_normal((11, 8))
    logits = S.tied_lm_head(hidden, E)
    assert logits.shape == (2, 3, 11)
    np.testing.assert_allclose(logits, S.lm_head(hidden, E.T, np.zeros(11)))

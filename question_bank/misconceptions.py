"""The named misconceptions that distractors are built from.

Every wrong choice in a variant names one entry of :data:`MISCONCEPTIONS`, so
feedback, reports and later diagnosis speak the same vocabulary. An entry has
a short name (shown next to a wrong choice) and a general explanation; the
family adds feedback specific to the numbers of its question.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Misconception:
    """One named mistake.

    Attributes:
        id: kebab-case key stored in variants.
        name: a few words naming the mistake.
        explanation: why it is wrong, in general terms.
        effect: for mistakes in a sum of parts (parameter counts, vocabulary
            sizes): ``"omits"`` when the mistake leaves a part out, so the
            total comes out too small, ``"adds"`` when it counts something
            extra, so the total comes out too large; empty otherwise. The
            label-to-formula test holds every such label to its sign.
    """

    id: str
    name: str
    explanation: str
    effect: str = ""


_ENTRIES = (
    # --- likelihood, perplexity and units -------------------------------
    Misconception("sum-vs-mean", "Sum and mean mixed up",
                  "A sequence log-probability is a sum over its tokens; the loss and the perplexity use "
                  "the mean over the N scored positions. Swapping them scales the result by N."),
    Misconception("wrong-log-base", "Wrong logarithm base",
                  "Course losses are in nats (natural log). Base 2 gives bits and base 10 gives bans; "
                  "mixing bases changes every number."),
    Misconception("bits-vs-nats", "Bits and nats mixed up",
                  "One bit is ln 2 ≈ 0.693 nats. Converting between the units divides or multiplies by ln 2."),
    Misconception("sum-not-product", "Adding probabilities instead of multiplying",
                  "The chain rule multiplies conditional probabilities (adds their logs); adding "
                  "probabilities does not give the probability of a sequence."),
    Misconception("drops-first-factor", "Dropping the first conditional",
                  "The first token has a conditional too (given the start of the sequence); the chain "
                  "rule multiplies every factor."),
    Misconception("log-sign", "Sign of the log-likelihood",
                  "A log-probability is negative; the negative log-likelihood (the loss) is its negation. "
                  "Keep track of which one the question asks for."),
    Misconception("factor-counted-twice", "A factor counted twice",
                  "Each conditional enters the chain-rule product exactly once."),
    Misconception("log-for-probability", "Log-probability given for the probability",
                  "The probability is the product itself; its logarithm is a different quantity."),
    Misconception("perplexity-is-loss", "Perplexity confused with the loss",
                  "Perplexity is exp(mean NLL), not the mean NLL itself."),
    Misconception("perplexity-reciprocal", "Perplexity inverted",
                  "exp(-mean NLL) is the geometric-mean probability; perplexity is its reciprocal."),
    Misconception("perplexity-is-expected-guesses", "Perplexity read as the expected number of guesses",
                  "Perplexity is the number of equally likely choices the model is as unsure as: V for a "
                  "uniform model. Guessing tokens one by one until the right one needs (V + 1) / 2 guesses "
                  "on average, a different quantity."),
    Misconception("arithmetic-mean-perplexity", "Arithmetic instead of geometric mean",
                  "Perplexity is the reciprocal of the geometric mean of the token probabilities, "
                  "not an arithmetic mean of probabilities or of their reciprocals."),
    Misconception("uniform-probability-not-loss", "Probability given where a loss is asked",
                  "A uniform model gives each token probability 1/V; its loss is -ln(1/V) = ln V."),
    Misconception("perplexity-for-loss", "Perplexity given where a loss is asked",
                  "For a uniform model the perplexity is V and the loss is ln V; they are different quantities."),
    Misconception("bigram-is-exact", "Treating the approximation as the model",
                  "A bigram model conditions on one previous token only; its factors differ from the "
                  "full-history conditionals, so its product differs too."),
    Misconception("ratio-inverted", "Ratio or difference taken the wrong way round",
                  "Read which model goes in the numerator (or first in the difference)."),
    # --- the loss, its alignment and its gradient -----------------------
    Misconception("off-by-one-alignment", "Off-by-one alignment (h[i] scored against w_i)",
                  "The state at position i has seen tokens up to i and predicts token i+1; scoring it "
                  "against token i asks it to copy a token it can already see."),
    Misconception("shift-wrong-direction", "Targets shifted the wrong way",
                  "Targets are the inputs moved one step to the left (the next token), not the previous token."),
    Misconception("targets-equal-inputs", "Targets equal to the inputs",
                  "Without the shift by one the model is trained to copy its input."),
    Misconception("shift-too-far", "Targets shifted too far",
                  "Each target is the token right after its input: the inputs moved one step, not two."),
    Misconception("missing-1-over-n", "Forgetting the 1/N of the mean",
                  "The loss is a mean over N positions, so each position's gradient carries a factor 1/N."),
    Misconception("divide-by-vocab", "Averaging over the vocabulary",
                  "The mean runs over the N scored positions, not over the V vocabulary entries."),
    Misconception("softmax-without-onehot", "Forgetting to subtract the one-hot",
                  "dlogits is (softmax - onehot)/N: the true token's entry is reduced by 1/N."),
    Misconception("gradient-sign", "Gradient sign flipped",
                  "The gradient of the loss is softmax minus onehot; onehot minus softmax is the "
                  "direction that decreases the loss."),
    Misconception("logit-bias-dropped", "Bias left out of the logits",
                  "The head adds its bias after the product: logits = hidden @ W_head + b_head; the bias "
                  "shifts each token's logit by its own amount, which changes the softmax."),
    Misconception("sigmoid-for-softmax", "A sigmoid per token instead of the softmax",
                  "Softmax normalises over every token, e^{z_j} / sum_k e^{z_k}; a sigmoid of one logit "
                  "ignores the others, and such scores need not sum to 1."),
    Misconception("softmax-shift-changes-probabilities", "Softmax taken to change under a common shift",
                  "Adding the same constant c to every logit multiplies every e^{z_k} by e^c, which cancels: "
                  "softmax depends only on differences of logits. Stable code subtracts the largest logit "
                  "for exactly this reason."),
    Misconception("mask-with-zero", "Blocked scores set to 0 instead of -inf",
                  "A blocked score must get exp(score) = 0 before the softmax, so it is set to -inf; a score "
                  "of 0 still gets weight e^0 = 1 and lets the query see the future."),
    Misconception("weight-grad-without-input", "Weight gradient without its input",
                  "dW_head = hidden^T @ dlogits: each entry sums the input hidden[n, c] times dlogits[n, j] "
                  "over the positions; without the input it is the bias gradient."),
    Misconception("logits-not-probabilities", "Logits used as probabilities",
                  "The gradient uses the softmax probabilities, not the raw logits."),
    Misconception("probability-not-loss", "Probability where the loss is asked",
                  "The loss is a negative log-probability, not the probability itself."),
    # --- code: the NumPy slips of the assignments' mistake catalogues ---
    Misconception("softmax-no-max-shift", "Softmax without the max shift",
                  "exp overflows to inf for logits above about 709 (float64), and inf/inf is nan; "
                  "subtracting each row's maximum leaves the probabilities unchanged and keeps exponents <= 0."),
    Misconception("softmax-global-max", "One maximum for the whole array",
                  "The shift must be each distribution's own maximum; one maximum for all rows underflows "
                  "rows that sit far below it."),
    Misconception("softmax-min-shift", "Minimum subtracted instead of the maximum",
                  "Shifting by the minimum leaves exponents as large as the row's spread, which can overflow."),
    Misconception("softmax-wrong-axis", "Softmax over the wrong axis",
                  "Each distribution is normalized along its own axis (the vocabulary, for logits); "
                  "another axis mixes positions or batch entries."),
    Misconception("softmax-whole-array", "Normalized over the whole array",
                  "Without an axis the whole array sums to 1 instead of each distribution."),
    Misconception("softmax-not-normalised", "Exponentials not normalised",
                  "Softmax divides each exponential by their sum; after the max shift e^(s - max) is at most "
                  "1, but the weights only sum to 1 once divided."),
    Misconception("mean-over-batch-only", "Averaged over the batch size only",
                  "Every one of the B*T positions has a target, so the mean divides by N = B*T, not B."),
    Misconception("target-column-indexing", "Target picked with [:, targets]",
                  "probs[:, targets] is an N x N block; pairing each row with its own target needs a row "
                  "index as well: probs[arange(N), targets]."),
    # --- shapes ---------------------------------------------------------
    Misconception("weight-transposed", "Weight matrix transposed",
                  "W_head maps width C to vocabulary V, so it is (C, V); its gradient has the same shape."),
    Misconception("head-keeps-width", "The head keeps the model width",
                  "The head replaces the last axis C by V: one score per vocabulary entry."),
    Misconception("flattened-batch", "Batch and time axes left flattened",
                  "Flattening to (B*T, ...) is an internal step; the result is reshaped back to (B, T, ...)."),
    Misconception("scores-only-last-position", "Only the last position scored",
                  "During training every position predicts its next token; only generation reads the last one."),
    Misconception("time-major", "Batch and time axes swapped",
                  "The course's tensors are batch-first, (B, T, ...); (T, B, ...) is the time-major layout "
                  "of other code, and reading it as (B, T, ...) mixes sequences."),
    Misconception("forgets-batch-axis", "Batch axis dropped",
                  "Every per-position tensor keeps its leading batch axis B."),
    Misconception("bias-sized-by-width", "Bias sized by the model width",
                  "The head's bias adds one number per vocabulary entry, so it has V entries."),
    Misconception("bias-per-position", "Bias (or its gradient) kept per position",
                  "One bias vector is shared by all positions, so its gradient sums over B and T."),
    Misconception("grad-shape-mismatch", "Gradient shaped like another tensor",
                  "A gradient has the shape of the tensor it is taken with respect to."),
    Misconception("hidden-is-logits", "Hidden states confused with logits",
                  "Hidden states have the model width C; the vocabulary axis appears only after the head."),
    Misconception("weight-has-batch-axis", "Weights given a batch axis",
                  "Parameters are shared by every sequence and position; they have no B or T axis."),
    Misconception("softmax-in-head", "Softmax inside the head",
                  "The head returns raw scores (logits); softmax belongs to the loss or to sampling."),
    Misconception("operand-order", "Operands of the product swapped",
                  "The hidden states are on the left: (..., C) @ (C, V) gives (..., V)."),
    Misconception("weight-grad-per-position", "Weight gradient kept per position",
                  "The weight is shared by all positions, so its gradient sums their contributions."),
    Misconception("confuses-context-with-vocab", "Context length used where the vocabulary belongs",
                  "The head's output axis is the vocabulary size V, not the context length T."),
    Misconception("missing-transpose", "Missing transpose of the tied matrix",
                  "The token embedding is (V, C); the tied head multiplies by its transpose (C, V)."),
    # --- parameter counting ---------------------------------------------
    Misconception("tied-counted-twice", "Tied output matrix counted twice",
                  "With tied weights the output projection is the token embedding; count it once.", effect="adds"),
    Misconception("untied-not-counted", "Untied output matrix not counted",
                  "An untied head is a separate V x d matrix and adds V*d parameters.", effect="omits"),
    Misconception("forgot-position-embeddings", "Position table forgotten",
                  "Learned position embeddings add T*d parameters (T = context length).", effect="omits"),
    Misconception("forgot-biases", "Biases forgotten",
                  "Under the course convention the attention projections and the FFN layers carry biases.", effect="omits"),
    Misconception("forgot-output-projection", "Attention output projection forgotten",
                  "Attention has Q, K, V projections and an output projection: four d x d matrices.", effect="omits"),
    Misconception("one-block-only", "One block counted instead of L",
                  "Every one of the L blocks has its own attention, FFN and LayerNorm parameters.", effect="omits"),
    Misconception("ffn-width-is-model-width", "FFN width taken as the model width",
                  "The FFN expands d to its own width f (3072 = 4 x 768 in GPT-1) and back."),
    Misconception("one-layernorm-per-block", "One LayerNorm per block",
                  "Each block has two affine LayerNorms, each with a gain and a bias of size d: 4d per block.", effect="omits"),
    Misconception("whole-block-counted", "Whole block counted for one part",
                  "A component's count holds its own tensors only, not the rest of the block.", effect="adds"),
    Misconception("layernorm-as-matrix", "LayerNorm counted as a d x d matrix",
                  "A LayerNorm has a gain and a bias vector of size d each, no matrix.", effect="adds"),
    Misconception("parameters-per-position", "Biases or gains kept per position",
                  "Biases and LayerNorm parameters are shared by all T positions.", effect="adds"),
    Misconception("rows-not-parameters", "Rows counted, not parameters",
                  "Each table row holds d parameters; the count multiplies rows by d."),
    Misconception("counts-final-layernorm", "Final LayerNorm counted",
                  "The course convention counts two LayerNorms per block and no final one.", effect="adds"),
    Misconception("counts-output-bias", "Output bias counted",
                  "The course convention has no separate output bias.", effect="adds"),
    Misconception("position-table-in-head", "Position table added to the head",
                  "The output head maps d to the V token scores; the T x d position table belongs to the "
                  "input and is not part of the head.", effect="adds"),
    Misconception("embeddings-per-layer", "Embeddings counted per block",
                  "The token and position tables exist once, at the input, not once per block.", effect="adds"),
    Misconception("merges-equal-vocab", "Merges equal to the vocabulary size",
                  "Each merge adds one token to the base alphabet; the vocabulary also holds the base "
                  "symbols and any special tokens."),
    Misconception("forgot-base-alphabet", "Base alphabet forgotten",
                  "BPE starts from a base alphabet (bytes or characters) and adds merges on top.", effect="omits"),
    Misconception("merge-adds-two-tokens", "Each merge counted as two new tokens",
                  "A merge adds one token, the merged pair; the two parts were already in the vocabulary."),
    Misconception("base-counted-twice", "Base alphabet counted twice",
                  "The base symbols enter the vocabulary once; merging adds new tokens beside them.", effect="adds"),
    Misconception("token-table-forgotten", "Token table forgotten",
                  "The token embedding table (V x d) is part of the embeddings.", effect="omits"),
    Misconception("assumed-byte-alphabet", "Byte alphabet assumed",
                  "The base alphabet is the one the question gives; it is 256 only for byte-level BPE."),
    Misconception("forgot-special-tokens", "Special tokens forgotten",
                  "Special tokens such as start, delimiter and end are vocabulary entries too.", effect="omits"),
    Misconception("bytes-not-parameters", "Bytes counted instead of parameters",
                  "A parameter is one number; the 4 bytes a float32 takes to store it are memory, not "
                  "parameters.", effect="adds"),
    Misconception("sign-slip-parts", "A part counted with the wrong sign",
                  "vocab = base + merges + specials: every part is added to the vocabulary, and solving "
                  "for the merges subtracts the other two (moving a term across flips its sign)."),
    # --- masks, positions and decoding ----------------------------------
    Misconception("positions-off-by-one", "One position too few or too many",
                  "Positions 0 to T-1 are T positions; a count over them uses T, not T-1 or T+1."),
    Misconception("one-query-only", "One query's row counted",
                  "The count runs over every query position, each with its own keys."),
    Misconception("mask-counts-diagonal", "Diagonal counted as blocked",
                  "A position may attend to itself; only keys after the query are blocked."),
    Misconception("mask-diagonal-removed-twice", "Diagonal removed twice",
                  "T(T-1)/2 = (T^2 - T)/2 has already taken the T pairs of a position with itself out of "
                  "the T^2; taking them out again undercounts by T."),
    Misconception("mask-both-triangles", "Both triangles counted",
                  "Only the keys after the query (the upper triangle) are blocked."),
    Misconception("mask-blocks-past", "Mask blocks the past",
                  "A causal mask hides later positions; earlier positions stay visible."),
    Misconception("allowed-vs-blocked", "Allowed and blocked pairs swapped",
                  "Blocked pairs are the future keys k > j; allowed pairs are k <= j, diagonal included."),
    Misconception("no-mask", "Mask ignored",
                  "Without the mask every query sees every key: T^2 pairs."),
    Misconception("mask-counted-per-head", "Every head's mask counted",
                  "Each attention head applies the same T x T causal mask; one head's mask has T^2 "
                  "pairs, whatever the number of heads."),
    Misconception("attends-only-to-itself", "Only the diagonal allowed",
                  "A query sees itself and every earlier key, not only itself."),
    Misconception("one-row-only", "One sequence counted",
                  "The count runs over every sequence of the batch."),
    Misconception("truncated-to-shortest", "Every row counted as the shortest",
                  "Right padding keeps each sequence's own length; longer rows score more positions."),
    Misconception("padding-scored", "Padding scored",
                  "Positions whose target is padding are excluded from the loss and from its denominator."),
    Misconception("last-token-scored", "Last real token scored",
                  "The last real token of a sequence has no next token, so it predicts nothing."),
    Misconception("counts-all-slots", "Every slot counted",
                  "Neither padding nor the final position is a prediction with a real target."),
    Misconception("one-fewer-target", "One target too few",
                  "A window of T inputs has exactly T targets: the shift takes one more token from the data."),
    Misconception("first-position-state", "First position's state used",
                  "The next token after the sequence is read from the last position's hidden state."),
    Misconception("mean-of-states", "Hidden states averaged",
                  "Greedy decoding and a fine-tuned classifier read the last position's state, which has seen "
                  "the whole input, not an average over positions."),
    Misconception("lowest-logit-wins", "Lowest score chosen",
                  "Greedy decoding takes the largest logit (the most probable token)."),
    # --- GPT-1 objective, fine-tuning and inputs -------------------------
    Misconception("l1-l2-are-norms", "L1 and L2 read as norm penalties",
                  "In GPT-1's notation L1 is the language-model log-likelihood and L2 the supervised "
                  "log-likelihood; they are not weight-norm penalties."),
    Misconception("lambda-dropped", "Weight lambda dropped",
                  "The auxiliary language-model term is scaled by lambda."),
    Misconception("lambda-on-wrong-term", "Lambda on the wrong term",
                  "Lambda weights the auxiliary LM term L1, not the supervised term L2."),
    Misconception("maximize-minimize-sign", "Maximised and minimised forms mixed",
                  "L3 = L2 + lambda L1 is maximised; the loss minimised is its negation, -L2 + lambda (-L1)."),
    Misconception("lm-term-subtracted", "LM term subtracted",
                  "Both terms of L3 = L2 + lambda L1 are log-likelihoods to be raised together, so the "
                  "weighted LM term is added, not subtracted."),
    Misconception("classify-first-position", "Classifier reads the first position",
                  "Under a causal mask only the final position has seen the whole input."),
    Misconception("label-in-input", "Label placed in the input",
                  "The label is the supervised target; putting it in the input leaks the answer."),
    Misconception("decoder-cannot-classify", "A decoder-only model cannot classify",
                  "A classifier on the final position's representation works with a decoder-only model."),
    Misconception("entailment-order-swapped", "Premise and hypothesis swapped",
                  "GPT-1 fine-tunes entailment on premise, delimiter, then hypothesis. The order is that "
                  "paper's convention, not a law: a model fine-tuned on the other order would learn it, but "
                  "swapping the order at test time feeds the model an input unlike every one it was tuned on."),
    Misconception("missing-delimiter", "Delimiter left out",
                  "A delimiter token marks where one text ends and the next begins."),
    Misconception("similarity-one-order", "Only one order for similarity",
                  "Similarity is symmetric, so both orders are processed and their representations combined."),
    Misconception("qa-omits-context", "Context left out",
                  "Each candidate sequence holds the document or context, the question and the candidate answer."),
    Misconception("candidates-in-one-sequence", "All candidates in one sequence",
                  "Each candidate is scored in its own sequence with shared parameters, then a softmax "
                  "runs over the candidates."),
    Misconception("softmax-over-vocabulary", "Normalised over the vocabulary",
                  "Candidate scores are normalised over the candidates, not over vocabulary entries."),
    Misconception("processes-pair-separately", "Pair processed as two separate inputs",
                  "The task relates the two texts, so GPT-1 puts both in one sequence (in both orders for "
                  "similarity), where attention can compare them."),
    Misconception("entailment-both-orders", "Entailment treated as symmetric",
                  "Both orders, combined, is GPT-1's input for similarity, which has no direction; entailment "
                  "has one, so GPT-1 feeds one sequence, premise first."),
    Misconception("similarity-states-concatenated", "Similarity states concatenated",
                  "Concatenated states keep which order filled which half; GPT-1 adds the two, which is the "
                  "same whichever sentence comes first."),
    Misconception("pair-reads-one-text", "One text of a pair read alone",
                  "A relation between two texts depends on both; one alone cannot decide it."),
    Misconception("classes-as-candidates", "Classes scored as answer candidates",
                  "Scoring each class name in its own sequence with a softmax over them is GPT-1's multiple-choice "
                  "input; for classification it feeds the text alone to a new linear layer over the classes."),
    Misconception("classes-in-input", "Class names put in the input",
                  "The classes are the outputs of the new linear layer; the input is the text alone."),
    Misconception("candidates-added", "Candidates' states added",
                  "Each candidate needs a score of its own for the softmax over the candidates; added states "
                  "leave one vector for the whole question."),
    Misconception("teacher-forcing-feeds-predictions", "Teacher forcing feeds predictions back",
                  "Under teacher forcing every input is the observed token, whatever the model predicted."),
    Misconception("generation-uses-ground-truth", "Generation reads the reference text",
                  "At generation there is no reference; each chosen token becomes the next input."),
    Misconception("generation-ignores-own-output", "Generated tokens not fed back",
                  "Each generated token is appended to the input before the next step."),
    Misconception("target-leak", "The target fed as input",
                  "A position must not receive the token it is asked to predict."),
    Misconception("another-position", "Another position's pair",
                  "Position t reads token t of the input row (position 0 holds the start token) and is scored "
                  "on the token after it; a miscounted position gives a neighbour's input and target."),
    Misconception("training-is-sequential", "Training runs position by position",
                  "With teacher forcing and a causal mask, all positions are scored in one parallel pass."),
    # --- statements from the course's list of dangerous misconceptions ---
    Misconception("chain-rule-assumes-independence", "The chain rule assumes independence",
                  "The chain rule is an identity of conditional probability; independence is a separate, "
                  "extra assumption."),
    Misconception("probability-is-truth", "High probability means true",
                  "A probability measures fit to the learned distribution, not factual correctness."),
    Misconception("last-state-sees-future", "The last state has seen the future",
                  "The last position sees every earlier input and nothing after its own position."),
    Misconception("perplexity-across-tokenizers", "Perplexity compared across tokenizers",
                  "Perplexity is per token; a different tokenizer changes what a token is."),
    Misconception("mask-alone-prevents-leakage", "The mask alone prevents leakage",
                  "With misaligned labels the current token is in the residual stream; the mask cannot hide it."),
    Misconception("fine-tuning-drops-lm-objective", "The LM objective dropped in fine-tuning",
                  "GPT-1 keeps language modelling as an auxiliary objective during fine-tuning, weighted by "
                  "lambda: L3 = L2 + lambda L1."),
    Misconception("step-before-its-input", "A step placed before the step it uses",
                  "Each line of the forward and backward pass reads what an earlier line computed; placed "
                  "before that line, it would read a value that does not exist yet."),
    Misconception("softmax-changes-argmax", "Softmax changes the winner",
                  "Softmax is monotonic, so the largest logit is also the most probable token."),
)

#: Every misconception by id.
MISCONCEPTIONS: dict[str, Misconception] = {m.id: m for m in _ENTRIES}

if len(MISCONCEPTIONS) != len(_ENTRIES):  # pragma: no cover - guards a copy-paste slip
    raise RuntimeError("duplicate misconception id in question_bank.misconceptions")


def misconception_ref(misconception_id: str) -> dict[str, str]:
    """The ``{"id", "name"}`` record a variant stores for a wrong choice.

    Raises:
        KeyError: if the id is not in the catalogue (a bug in a family).
    """
    entry = MISCONCEPTIONS[misconception_id]
    return {"id": entry.id, "name": entry.name}

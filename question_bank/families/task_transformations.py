"""GPT-1's task-specific input transformations for fine-tuning.

Why one module of this size: the choices, the readers who judge them without the stem
(:func:`_reader_shares`) and the independent rules (:func:`_follows_rules`) are one definition of what a
transformation is; split, the draw could balance a reader against rules the check no longer holds.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank.choice_balance import MAX_POOL, candidate_sets, fit_problem, problem_weights
from question_bank.choices import N_DISTRACTORS
from question_bank.families._common import SENTENCES
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft, Option

START, DELIM, END = "<s>", "$", "<e>"
TASKS = ("classification", "entailment", "similarity", "multiple_choice")
#: The share of chance the stem-blind readers are fitted to (the text players get 0.9: see choice_balance).
READER_CAP = 1.08
#: The placeholder reader's cap: one in two (see pick_choices).
PLACEHOLDER_CAP = 0.5
#: Classes a classification stem names (class1 ... class3): the candidates' treatment of classes needs them.
N_CLASSES = 3

#: Reading-comprehension items written from the course corpus: context, question, candidates.
QA_ITEMS = (
    ("the tide rises at dusk and falls at dawn.", "when does the tide fall?", ("at dawn", "at dusk", "at noon")),
    ("the keeper rings the bell when a boat drifts near the rocks.", "what does the keeper ring?",
     ("the bell", "the lantern", "the boats", "the book")),
    ("the lamp keeper lights the lantern when the fog rolls in.", "when is the lantern lit?",
     ("when the fog rolls in", "at dawn", "when the tide is low")),
    ("the keeper counts the boats and writes the count in a book.", "where is the count written?",
     ("in a book", "on the lantern", "near the rocks", "in the bay")),
)

_COMBINE_TEXT = {
    "one": "feed that state to a linear classifier",
    "add": "add the two final states, then apply a linear classifier",
    "concat": "concatenate the two final states, then apply a linear classifier",
    "softmax-candidates": "take a softmax over the candidates' linear scores",
    "softmax-vocab": "take a softmax over the vocabulary at each candidate's final position",
    "lm-head": "read the class as the next token from the LM head's softmax over the vocabulary",
}


def _sentence(index: int) -> str:
    return " ".join(SENTENCES[index]) + "."


def _seq(*parts: str) -> list[str]:
    return list(parts)


def _value(inputs: list[list[str]], readout: str = "end", combine: str = "one") -> dict[str, Any]:
    return {"inputs": inputs, "readout": readout, "combine": combine}


def _render(value: dict[str, Any]) -> str:
    """One choice as Markdown: the input sequence(s), the read-out position, the combination."""
    sequences = " and ".join(f"`{' '.join(s)}`" for s in value["inputs"])
    noun = "Input" if len(value["inputs"]) == 1 else "Inputs"
    if value["readout"] == "mean":
        return (f"{noun} {sequences}; average the final block's states over every position and "
                f"{_COMBINE_TEXT[value['combine']]}.")
    where = "`<e>` (the final position)" if value["readout"] == "end" else "`<s>` (the first position)"
    return f"{noun} {sequences}; take the final block's state at {where} and {_COMBINE_TEXT[value['combine']]}."


def _read_first(value: dict[str, Any]) -> dict[str, Any]:
    return {**value, "readout": "start"}


def _read_mean(value: dict[str, Any]) -> dict[str, Any]:
    return {**value, "readout": "mean"}


#: Said of every choice that reads the first position.
_FIRST = "Under the causal mask the first position has seen nothing but itself."

#: Said of every classification choice that reads the class off the LM head.
_LM_HEAD = ("GPT-1 adds a new linear layer over the classes on the final state; the pretrained head's "
            "softmax over the vocabulary scores next tokens, not classes.")

#: Said of every choice that averages the states.
_MEAN = ("Averaging the states mixes in early positions that have seen only the start of the input; the "
         "final position has seen all of it, and its state alone feeds the classifier.")


def _one(first: str, second: str) -> dict[str, Any]:
    """A pair in one sequence, ``first`` before the delimiter: GPT-1's entailment form."""
    return _value([_seq(START, first, DELIM, second, END)])


def _both(first: str, second: str, combine: str = "add") -> dict[str, Any]:
    """A pair in both orders (``first`` printed first), the two final states combined: GPT-1's similarity form."""
    return _value([_seq(START, first, DELIM, second, END), _seq(START, second, DELIM, first, END)], combine=combine)


def _apart_texts(first: str, second: str, combine: str = "add") -> dict[str, Any]:
    """Each text in a sequence of its own, the two final states combined."""
    return _value([_seq(START, first, END), _seq(START, second, END)], combine=combine)


def _alone(text: str) -> dict[str, Any]:
    return _value([_seq(START, text, END)])


def universally_wrong(value: dict[str, Any]) -> bool:
    """Whether a choice has a feature no GPT-1 transformation has, for any task.

    A reader who knows GPT-1 rejects such a choice without the stem, so the draw shows at most
    one of them (:func:`pick_choices`): the rest are transformations GPT-1 uses for some task.
    """
    if value["readout"] != "end" or value["combine"] in ("lm-head", "softmax-vocab"):
        return True
    if any(token.startswith("label") for seq in value["inputs"] for token in seq):
        return True
    return any(len([t for t in seq if t not in (START, DELIM, END)]) >= 2 and DELIM not in seq
               for seq in value["inputs"])


def _features(value: dict[str, Any]) -> tuple[Any, ...]:
    """What a reader compares across choices: readout, sequences, delimiter, combination, label, first text."""
    first = [t for t in value["inputs"][0] if t not in (START, DELIM, END)]
    return (value["readout"], len(value["inputs"]), DELIM in value["inputs"][0], value["combine"],
            any(t.startswith("label") for seq in value["inputs"] for t in seq), first[0] if first else "")


def _majority_share(values: list[dict[str, Any]]) -> float:
    """The share of its pick a reader who takes the most common value of every feature puts on ``values[0]``."""
    features = [_features(v) for v in values]
    scores = []
    for own in features:
        counts = [sum(other[f] == own[f] for other in features) for f in range(len(own))]
        scores.append(sum(c == max(sum(o[f] == x[f] for o in features) for x in features)
                          for f, c in enumerate(counts)))
    top = [s == max(scores) for s in scores]
    return top[0] / sum(top)


def _right_for_some_task(value: dict[str, Any], k: int) -> bool:
    return any(_follows_rules(task, value, k, premise) for task in TASKS for premise in "AB")


#: Readers who never read the stem, as the share of their pick on the key (``values[0]``) of a choice list:
#: the flaw reader drops choices no task would use, the placeholder reader keeps those right for some task,
#: the majority reader takes the most common value of each feature.
def _reader_shares(values: list[dict[str, Any]], k: int) -> tuple[float, float, float]:
    sound = [not universally_wrong(v) for v in values]
    right = [_right_for_some_task(v, k) for v in values]
    return 1.0 / sum(sound), 1.0 / sum(right), _majority_share(values)


def pick_choices(rng: np.random.Generator, key: Option, wrong: list[Option], k: int) -> list[Option]:
    """Three distractors, balanced as :func:`question_bank.choices.pick_distractors` balances them, then
    tilted so that readers who know GPT-1 but not the stem find the key no more often than chance.

    With every distractor carrying a feature no task has and the key none, such a reader found the key
    every time. The sets are weighted as :func:`question_bank.choice_balance.fitted_weights` weights
    them, with three more capped players in the same fit: the readers of :func:`_reader_shares`. A
    helper of this family: the shared draw knows texts, not transformations.
    """
    order = [wrong[int(i)] for i in rng.permutation(len(wrong))]
    usable = [o for o in order if o.text != key.text]
    # every sound choice stays in the pool; universally wrong ones fill it up to the usual size, in shuffled order
    room = MAX_POOL - sum(not universally_wrong(o.value) for o in usable)
    pool = []
    for option in usable:
        if universally_wrong(option.value):
            if room <= 0:
                continue
            room -= 1
        pool.append(option)
    sets = candidate_sets(len(pool), N_DISTRACTORS, lambda a, b: pool[a].text != pool[b].text)
    orders, groups, chance = fit_problem(key.text, [o.text for o in pool], sets)
    readers = np.array([_reader_shares([key.value, *(pool[i].value for i in s)], k) for s in sets])
    # the readers are capped a little above chance, after the text players
    # where the placeholders give the task away (the key the only choice right for any task, in every set),
    # the flaw and placeholder readers find the key whatever is drawn; capping them would only cost the others
    capped = range(readers.shape[1]) if readers[:, 1].min() < 1.0 else [2]
    # A and B allow three keys (A first, B first, both orders): the placeholder reader cannot be held below
    # one in three, and holding it there pushed similarity to the sets of short one-order choices
    limits = (READER_CAP * chance, PLACEHOLDER_CAP, READER_CAP * chance)
    caps = [(readers[:, j], np.ones(len(sets)), limits[j]) for j in capped]
    # fitted as fitted_weights fits the text players, with the three readers as three more capped players
    weights = problem_weights((orders, groups, chance), len(sets), caps)
    chosen = sets[int(rng.choice(len(sets), p=weights))]
    return [pool[i] for i in chosen]


def options_for(task: str, k: int, premise: str = "A", first: str = "A"
                ) -> list[tuple[dict[str, Any], str | None, str]]:
    """Every choice for ``task``: (value, misconception or None, feedback); the first is correct.

    Entailment and similarity name their two sentences A and B alike (the entailment stem says
    which is the ``premise``), and each offers the other's transformation and GPT-1's form of
    another task (one text alone, each text in its own sequence, the candidates' treatment for the
    classes): the placeholders then no longer say which task is asked, and a choice that is right
    for some task is wrong here only by the stem. ``first`` is the sentence a two-sequence choice
    prints first. Choices with a feature no task has (the first position, an average, the LM
    head, a label in the input, no delimiter) stay as mistakes, at most one per question
    (:func:`pick_choices`). Choices with two mistakes keep the first mistake's label and explain both.
    """
    other = "B" if first == "A" else "A"
    if task == "classification":
        classes = [f"class{j}" for j in range(1, N_CLASSES + 1)]
        key = _value([_seq(START, "text", END)])
        labelled = _value([_seq(START, "label", DELIM, "text", END)])
        label_feedback = "The label is the target; it cannot be part of the input."
        candidates_feedback = ("Scoring each class name as a candidate, with a softmax over them, is GPT-1's "
                               "multiple-choice treatment; for classification GPT-1 feeds the text alone and "
                               "puts a new linear layer over the classes on the final state.")
        in_input_feedback = ("The classes are the outputs of the new linear layer; GPT-1's input is the text "
                             "alone, so the class names are not part of it.")
        return [
            (key, None, "Correct: the end position has seen the whole text."),
            (_value([_seq(START, "text", DELIM, c, END) for c in classes], combine="softmax-candidates"),
             "classes-as-candidates", candidates_feedback),
            (_value([_seq(START, c, DELIM, "text", END) for c in classes], combine="softmax-candidates"),
             "classes-as-candidates", candidates_feedback),
            (_value([_seq(START, "text", *[x for c in classes for x in (DELIM, c)], END)]),
             "classes-in-input", in_input_feedback),
            (_value([_seq(START, *[x for c in classes for x in (c, DELIM)], "text", END)]),
             "classes-in-input", in_input_feedback),
            (_value([_seq(START, "text", DELIM, c, END) for c in classes], combine="add"),
             "classes-in-input", in_input_feedback),
            (_read_first(key), "classify-first-position", _FIRST),
            (labelled, "label-in-input", label_feedback),
            (_read_mean(key), "mean-of-states", _MEAN),
            ({**key, "combine": "lm-head"}, "softmax-over-vocabulary", _LM_HEAD),
            (_read_first(_value([_seq(START, "text", *[x for c in classes for x in (DELIM, c)], END)])),
             "classes-in-input", f"{in_input_feedback} Also: {_FIRST}"),
            (_read_mean(_value([_seq(START, "text", DELIM, c, END) for c in classes], combine="softmax-candidates")),
             "classes-as-candidates", f"{candidates_feedback} Also: {_MEAN}"),
        ]
    delimiter_feedback = "Without the delimiter the model cannot tell where one sentence ends."
    apart_feedback = "The relation needs both sentences in one sequence, so attention can compare them."
    alone_feedback = "The relation depends on both sentences; one of them alone cannot decide it."
    if task == "entailment":
        hypothesis = "B" if premise == "A" else "A"
        key = _one(premise, hypothesis)
        swap_feedback = ("GPT-1's input puts the premise first, then the hypothesis; that order is the "
                         "fine-tuning's convention, and the swapped order is not the input the model was tuned on.")
        both_feedback = ("Both orders, combined, is GPT-1's treatment of similarity, where order does not matter; "
                         "entailment has a direction, so GPT-1 feeds one sequence, premise first.")
        return [
            (key, None, f"Correct: the premise ({premise}), the delimiter, then the hypothesis ({hypothesis})."),
            (_one(hypothesis, premise), "entailment-order-swapped", swap_feedback),
            (_both(first, other), "entailment-both-orders", both_feedback),
            (_both(first, other, "concat"), "entailment-both-orders", both_feedback),
            (_apart_texts(first, other), "processes-pair-separately", apart_feedback),
            (_apart_texts(premise, hypothesis, "concat"), "processes-pair-separately", apart_feedback),
            (_alone(hypothesis), "pair-reads-one-text", alone_feedback),
            (_alone(premise), "pair-reads-one-text", alone_feedback),
            (_value([_seq(START, premise, hypothesis, END)]), "missing-delimiter", delimiter_feedback),
            (_read_first(key), "classify-first-position", "The first position has not seen the hypothesis."),
            (_read_mean(key), "mean-of-states", _MEAN),
            (_value([_seq(START, "label", DELIM, premise, DELIM, hypothesis, END)]), "label-in-input",
             "The label (entailed or not) is the target; it cannot be part of the input."),
            (_read_first(_one(hypothesis, premise)), "entailment-order-swapped", f"{swap_feedback} Also: {_FIRST}"),
            (_read_mean(_both(first, other)), "entailment-both-orders", f"{both_feedback} Also: {_MEAN}"),
            (_read_first(_apart_texts(first, other)), "processes-pair-separately", f"{apart_feedback} Also: {_FIRST}"),
        ]
    if task == "similarity":
        key = _both(first, other)
        order_feedback = "One order imposes a direction the task does not have; GPT-1 uses both."
        concat_feedback = ("Concatenated, the two states keep which order filled which half, so the classifier "
                           "can still tell the orders apart; GPT-1 adds them, which is the same whichever "
                           "sentence comes first.")
        return [
            (key, None, "Correct: both orders, representations added, because similarity has no order."),
            (_one("A", "B"), "similarity-one-order", order_feedback),
            (_one("B", "A"), "similarity-one-order", order_feedback),
            (_apart_texts(first, other), "processes-pair-separately", apart_feedback),
            (_apart_texts(first, other, "concat"), "processes-pair-separately", apart_feedback),
            (_alone("A"), "pair-reads-one-text", alone_feedback),
            (_alone("B"), "pair-reads-one-text", alone_feedback),
            (_value([_seq(START, first, other, END), _seq(START, other, first, END)], combine="add"),
             "missing-delimiter", delimiter_feedback),
            (_read_first(key), "classify-first-position", "The first position has seen neither sentence whole."),
            (_both(first, other, "concat"), "similarity-states-concatenated", concat_feedback),
            (_read_mean(key), "mean-of-states", _MEAN),
            ({**key, "combine": "lm-head"}, "softmax-over-vocabulary", _LM_HEAD),
            (_value([_seq(START, "label", DELIM, first, DELIM, other, END),
                     _seq(START, "label", DELIM, other, DELIM, first, END)], combine="add"),
             "label-in-input", "The label (same or not) is the target; it cannot be part of the input."),
        ]
    answers = [f"answer{j}" for j in range(1, k + 1)]
    key = _value([_seq(START, "context", "question", DELIM, a, END) for a in answers], combine="softmax-candidates")
    no_context = _value([_seq(START, "question", DELIM, a, END) for a in answers], combine="softmax-candidates")
    context_feedback = "Each sequence also needs the context document."
    vocab_feedback = "The candidate scores are normalised over the candidates."
    one_feedback = "Each candidate is scored in its own sequence."
    added_feedback = ("Adding the candidates' final states leaves one vector for the whole question; each "
                      "candidate needs a score of its own, and a softmax over the candidates picks one.")
    return [
        (key, None, "Correct: one sequence per candidate, shared weights, softmax over the candidates."),
        (no_context, "qa-omits-context", context_feedback),
        (_value([_seq(START, "context", "question", *[x for a in answers for x in (DELIM, a)], END)]),
         "candidates-in-one-sequence", one_feedback),
        (_value([_seq(START, "context", "question", DELIM, a, END) for a in answers], combine="add"),
         "candidates-added", added_feedback),
        (_value([_seq(START, "question", *[x for a in answers for x in (DELIM, a)], END)]),
         "candidates-in-one-sequence", f"{one_feedback} Also: {context_feedback}"),
        (_value([_seq(START, "question", DELIM, a, END) for a in answers], combine="add"),
         "candidates-added", f"{added_feedback} Also: {context_feedback}"),
        (_value([_seq(START, "context", "question", DELIM, a, END) for a in answers], combine="softmax-vocab"),
         "softmax-over-vocabulary", vocab_feedback),
        (_read_first(key), "classify-first-position", "The first position has seen none of the candidate."),
        (_read_mean(key), "mean-of-states", _MEAN),
        (_value([_seq(START, "question", DELIM, a, END) for a in answers], combine="softmax-vocab"),
         "qa-omits-context", f"{context_feedback} Also: {vocab_feedback}"),
        (_read_first(_value([_seq(START, "context", "question", *[x for a in answers for x in (DELIM, a)], END)])),
         "candidates-in-one-sequence", f"{one_feedback} Also: {_FIRST}"),
        (_read_mean(no_context), "qa-omits-context", f"{context_feedback} Also: {_MEAN}"),
    ]


@register_family
class TaskTransformations(Family):
    name = "task-transformations"
    version = 7  # v7: entailment and similarity name their sentences A and B alike and offer each other's transformation and other tasks' forms, with at most one choice no task would use, so a reader who knows GPT-1 cannot tell the key without the stem; v6: classification offers the states averaged and the class read off the LM head (alone and with another mistake), no longer the claim that a decoder cannot classify; v5: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "GPT-1 task input transformations"
    summary = "Pick GPT-1's input transformation for classification, entailment, similarity or multiple choice."
    tags = ("fine-tuning", "gpt-1")
    subquestion_key = "task"
    subquestion_values = TASKS
    distinct_target = 120
    # one stem per text, per ordered pair of texts (similarity; entailment twice, A or B the premise), per reading item
    distinct_items = len(SENTENCES) + 3 * len(SENTENCES) * (len(SENTENCES) - 1) + len(QA_ITEMS)

    def build(self, rng: np.random.Generator) -> Draft:
        task = TASKS[int(rng.integers(len(TASKS)))]
        params: dict[str, Any] = {"task": task}
        k = 0
        premise = first = "A"
        if task == "classification":
            params["text"] = _sentence(int(rng.integers(len(SENTENCES))))
            example = (f"text: *{params['text']}* (label: one of {N_CLASSES} classes, "
                       f"class1 to class{N_CLASSES})")
            what = "classify a single text"
        elif task in ("entailment", "similarity"):
            a, b = (int(x) for x in rng.choice(len(SENTENCES), size=2, replace=False))
            params["A"], params["B"] = _sentence(a), _sentence(b)
            example = f"sentence A: *{params['A']}*; sentence B: *{params['B']}*"
            first = "AB"[int(rng.integers(2))]
            if task == "entailment":
                premise = params["premise"] = "AB"[int(rng.integers(2))]
                hypothesis = "B" if premise == "A" else "A"
                what = f"decide whether sentence {premise} (the premise) entails sentence {hypothesis} (the hypothesis)"
            else:
                what = "decide whether sentences A and B mean the same"
        else:
            context, question, candidates = QA_ITEMS[int(rng.integers(len(QA_ITEMS)))]
            k = len(candidates)
            params.update(context=context, question=question, candidates=list(candidates))
            example = (f"context: *{context}* question: *{question}* candidates: "
                       + ", ".join(f"answer{j} = *{c}*" for j, c in enumerate(candidates, start=1)))
            what = "pick the right answer to a question about a context"
        key, *wrong = [Option(value=value, text=_render(value), correct=misconception is None,
                              misconception=misconception, feedback=feedback)
                       for value, misconception, feedback in options_for(task, k, premise, first)]
        options = [key, *pick_choices(rng, key, wrong, k)]
        stem = (f"GPT-1 is fine-tuned to {what}. Example: {example}. With start token `<s>`, delimiter `$` "
                "and end token `<e>`, which input transformation does GPT-1 use?")
        solution = (f"GPT-1's transformation: {options[0].text} GPT-1 keeps its pretrained decoder "
                    "unchanged and turns each task into token sequences: the final position (after `<e>`) has seen the whole input under the "
                    "causal mask, so its state feeds the new linear head. Pairs go into one sequence separated "
                    "by the delimiter; symmetric pairs are processed in both orders; multiple-choice "
                    "candidates each get their own sequence and a softmax over the candidates.")
        answer = Answer(kind="single_choice", value=None, display=options[0].text)
        return Draft(parameters=params, stem=stem, answer=answer, options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        """Each choice must satisfy the transformation rules exactly when it is marked correct."""
        p = variant["parameters"]
        problems = []
        for choice in variant["choices"]:
            rules = _follows_rules(p["task"], choice["value"], len(p.get("candidates", [])), p.get("premise", ""))
            if rules != choice["correct"]:
                problems.append(f"choice {choice['id']} marked correct={choice['correct']} breaks the rules")
        return problems


def _follows_rules(task: str, value: dict[str, Any], k: int, premise: str = "") -> bool:
    """GPT-1's rules, restated as predicates on a choice (independent of :func:`options_for`)."""
    if value["readout"] != "end":
        return False
    seqs = [tuple(s) for s in value["inputs"]]
    if not seqs or any(s[0] != START or s[-1] != END for s in seqs):
        return False
    body = [s[1:-1] for s in seqs]
    if task == "classification":
        return body == [("text",)] and value["combine"] == "one"
    if task == "entailment":
        hypothesis = {"A": "B", "B": "A"}.get(premise)
        return hypothesis is not None and body == [(premise, DELIM, hypothesis)] and value["combine"] == "one"
    if task == "similarity":
        return sorted(body) == [("A", DELIM, "B"), ("B", DELIM, "A")] and value["combine"] == "add"
    expected = sorted(("context", "question", DELIM, f"answer{j}") for j in range(1, k + 1))
    return sorted(body) == expected and value["combine"] == "softmax-candidates"

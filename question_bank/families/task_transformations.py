"""GPT-1's task-specific input transformations for fine-tuning."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank.choices import pick_distractors
from question_bank.families._common import SENTENCES
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft, Option

START, DELIM, END = "<s>", "$", "<e>"
TASKS = ("classification", "entailment", "similarity", "multiple_choice")

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


def options_for(task: str, k: int) -> list[tuple[dict[str, Any], str | None, str]]:
    """Every choice for ``task``: (value, misconception or None, feedback); the first is correct.

    Besides one choice per mistake, each task offers choices with two
    mistakes at once (they keep the first mistake's label and explain both):
    with single mistakes only, every distractor is one edit of the key and
    the key is the choice most alike to all the others.
    """
    if task == "classification":
        key = _value([_seq(START, "text", END)])
        labelled = _value([_seq(START, "label", DELIM, "text", END)])
        label_feedback = "The label is the target; it cannot be part of the input."
        return [
            (key, None, "Correct: the end position has seen the whole text."),
            (_read_first(key), "classify-first-position", _FIRST),
            (labelled, "label-in-input", label_feedback),
            (_read_first(labelled), "label-in-input", f"{label_feedback} Also: {_FIRST}"),
            # With only the first-position and label mistakes, and a claim that a decoder cannot classify
            # (a sentence unlike every other choice, so never the key, which left the key the most alike
            # of the transformations shown), the key was the most alike text 83 times in 242 (seed 0,
            # 1,000 variants, limit 33%). The claim is asked in misconceptions-true-false.
            (_read_mean(key), "mean-of-states", _MEAN),
            (_read_mean(labelled), "label-in-input", f"{label_feedback} Also: {_MEAN}"),
            ({**key, "combine": "lm-head"}, "softmax-over-vocabulary", _LM_HEAD),
            ({**_read_first(key), "combine": "lm-head"}, "classify-first-position", f"{_FIRST} Also: {_LM_HEAD}"),
            ({**labelled, "combine": "lm-head"}, "label-in-input", f"{label_feedback} Also: {_LM_HEAD}"),
        ]
    if task == "entailment":
        key = _value([_seq(START, "premise", DELIM, "hypothesis", END)])
        swapped = _value([_seq(START, "hypothesis", DELIM, "premise", END)])
        undelimited = _value([_seq(START, "premise", "hypothesis", END)])
        separate = _value([_seq(START, "premise", END), _seq(START, "hypothesis", END)], combine="add")
        swap_feedback = ("GPT-1's input puts the premise first, then the hypothesis; that order is the "
                         "fine-tuning's convention, and the swapped order is not the input the model was tuned on.")
        delimiter_feedback = "Without the delimiter the model cannot tell where the premise ends."
        separate_feedback = ("The relation needs both texts in one sequence, so attention can compare them.")
        return [
            (key, None, "Correct: premise, delimiter, hypothesis, in that order."),
            (swapped, "entailment-order-swapped", swap_feedback),
            (undelimited, "missing-delimiter", delimiter_feedback),
            (separate, "processes-pair-separately", separate_feedback),
            (_read_first(key), "classify-first-position", "The first position has not seen the hypothesis."),
            (_value([_seq(START, "hypothesis", "premise", END)]), "entailment-order-swapped",
             f"{swap_feedback} Also: {delimiter_feedback}"),
            (_read_first(swapped), "entailment-order-swapped", f"{swap_feedback} Also: {_FIRST}"),
            (_read_first(undelimited), "missing-delimiter", f"{delimiter_feedback} Also: {_FIRST}"),
            (_read_first(separate), "processes-pair-separately", f"{separate_feedback} Also: {_FIRST}"),
            (_value([_seq(START, "label", DELIM, "premise", DELIM, "hypothesis", END)]), "label-in-input",
             "The label (entailed or not) is the target; it cannot be part of the input."),
        ]
    if task == "similarity":
        key = _value([_seq(START, "A", DELIM, "B", END), _seq(START, "B", DELIM, "A", END)], combine="add")
        one_order = _value([_seq(START, "A", DELIM, "B", END)])
        undelimited = _value([_seq(START, "A", "B", END), _seq(START, "B", "A", END)], combine="add")
        labelled = _value([_seq(START, "label", DELIM, "A", DELIM, "B", END),
                           _seq(START, "label", DELIM, "B", DELIM, "A", END)], combine="add")
        order_feedback = "One order imposes a direction the task does not have; GPT-1 uses both."
        delimiter_feedback = "Each sequence needs the delimiter between the two sentences."
        label_feedback = "The label (same or not) is the target; it cannot be part of the input."
        return [
            (key, None, "Correct: both orders, representations added, because similarity has no order."),
            (one_order, "similarity-one-order", order_feedback),
            (undelimited, "missing-delimiter", delimiter_feedback),
            (_value([_seq(START, "A", END), _seq(START, "B", END)], combine="add"), "processes-pair-separately",
             "The two sentences are put in one sequence (in both orders) so attention can compare them."),
            (labelled, "label-in-input", label_feedback),
            (_read_first(key), "classify-first-position", "The first position has seen neither sentence whole."),
            (_value([_seq(START, "A", "B", END)]), "similarity-one-order",
             f"{order_feedback} Also: {delimiter_feedback}"),
            (_read_first(one_order), "similarity-one-order", f"{order_feedback} Also: {_FIRST}"),
            (_read_first(labelled), "label-in-input", f"{label_feedback} Also: {_FIRST}"),
            # With only the first-position and label mistakes, and a claim that a decoder cannot classify
            # (a sentence unlike every other choice, so never the key, which left the key the most alike
            # of the transformations shown), the key was the most alike text 83 times in 242 (seed 0,
            # 1,000 variants, limit 33%). The claim is asked in misconceptions-true-false.
            (_read_mean(key), "mean-of-states", _MEAN),
            (_read_mean(labelled), "label-in-input", f"{label_feedback} Also: {_MEAN}"),
            ({**key, "combine": "lm-head"}, "softmax-over-vocabulary", _LM_HEAD),
            ({**_read_first(key), "combine": "lm-head"}, "classify-first-position", f"{_FIRST} Also: {_LM_HEAD}"),
            ({**labelled, "combine": "lm-head"}, "label-in-input", f"{label_feedback} Also: {_LM_HEAD}"),
        ]
    answers = [f"answer{j}" for j in range(1, k + 1)]
    key = _value([_seq(START, "context", "question", DELIM, a, END) for a in answers], combine="softmax-candidates")
    no_context = _value([_seq(START, "question", DELIM, a, END) for a in answers], combine="softmax-candidates")
    one_sequence = _value([_seq(START, "context", "question", *[x for a in answers for x in (DELIM, a)], END)])
    context_feedback = "Each sequence also needs the context document."
    vocab_feedback = "The candidate scores are normalised over the candidates."
    return [
        (key, None, "Correct: one sequence per candidate, shared weights, softmax over the candidates."),
        (no_context, "qa-omits-context", context_feedback),
        (one_sequence, "candidates-in-one-sequence", "Each candidate is scored in its own sequence."),
        (_value([_seq(START, "context", "question", DELIM, a, END) for a in answers], combine="softmax-vocab"),
         "softmax-over-vocabulary", vocab_feedback),
        (_read_first(key), "classify-first-position", "The first position has seen none of the candidate."),
        (_value([_seq(START, "question", DELIM, a, END) for a in answers], combine="softmax-vocab"),
         "qa-omits-context", f"{context_feedback} Also: {vocab_feedback}"),
        (_read_first(no_context), "qa-omits-context", f"{context_feedback} Also: {_FIRST}"),
        (_read_first(_value([_seq(START, "context", "question", DELIM, a, END) for a in answers],
                            combine="softmax-vocab")),
         "softmax-over-vocabulary", f"{vocab_feedback} Also: {_FIRST}"),
        (_value([_seq(START, "question", *[x for a in answers for x in (DELIM, a)], END)]),
         "candidates-in-one-sequence", f"Each candidate is scored in its own sequence. Also: {context_feedback}"),
    ]


@register_family
class TaskTransformations(Family):
    name = "task-transformations"
    version = 6  # v6: classification offers the states averaged and the class read off the LM head (alone and with another mistake), no longer the claim that a decoder cannot classify; v5: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "GPT-1 task input transformations"
    summary = "Pick GPT-1's input transformation for classification, entailment, similarity or multiple choice."
    tags = ("fine-tuning", "gpt-1")
    subquestion_key = "task"
    subquestion_values = TASKS
    distinct_target = 120
    # one stem per text, per ordered pair of texts (entailment and similarity), per reading item
    distinct_items = len(SENTENCES) + 2 * len(SENTENCES) * (len(SENTENCES) - 1) + len(QA_ITEMS)

    def build(self, rng: np.random.Generator) -> Draft:
        task = TASKS[int(rng.integers(len(TASKS)))]
        params: dict[str, Any] = {"task": task}
        k = 0
        if task == "classification":
            params["text"] = _sentence(int(rng.integers(len(SENTENCES))))
            example = f"text: *{params['text']}* (label: one of a few classes)"
            what = "classify a single text"
        elif task in ("entailment", "similarity"):
            a, b = (int(x) for x in rng.choice(len(SENTENCES), size=2, replace=False))
            first, second = ("premise", "hypothesis") if task == "entailment" else ("A", "B")
            params[first], params[second] = _sentence(a), _sentence(b)
            example = f"{first}: *{params[first]}*; {second}: *{params[second]}*"
            what = ("decide whether the premise entails the hypothesis" if task == "entailment"
                    else "decide whether two sentences mean the same")
        else:
            context, question, candidates = QA_ITEMS[int(rng.integers(len(QA_ITEMS)))]
            k = len(candidates)
            params.update(context=context, question=question, candidates=list(candidates))
            example = (f"context: *{context}* question: *{question}* candidates: "
                       + ", ".join(f"answer{j} = *{c}*" for j, c in enumerate(candidates, start=1)))
            what = "pick the right answer to a question about a context"
        key, *wrong = [Option(value=value, text=_render(value), correct=misconception is None,
                              misconception=misconception, feedback=feedback)
                       for value, misconception, feedback in options_for(task, k)]
        options = [key, *pick_distractors(rng, key.value, wrong, answer_text=key.text)]
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
            if _follows_rules(p["task"], choice["value"], len(p.get("candidates", []))) != choice["correct"]:
                problems.append(f"choice {choice['id']} marked correct={choice['correct']} breaks the rules")
        return problems


def _follows_rules(task: str, value: dict[str, Any], k: int) -> bool:
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
        return body == [("premise", DELIM, "hypothesis")] and value["combine"] == "one"
    if task == "similarity":
        return sorted(body) == [("A", DELIM, "B"), ("B", DELIM, "A")] and value["combine"] == "add"
    expected = sorted(("context", "question", DELIM, f"answer{j}") for j in range(1, k + 1))
    return sorted(body) == expected and value["combine"] == "softmax-candidates"

"""Every numerical tolerance the grader uses, in one place.

Hidden tests, the gradient-check library and the question bank import these
names, so a tolerance is changed once and everywhere.
"""

#: Step for central differences; with float64 the truncation error
#: (~eps²) and the round-off error (~1e-16/eps) balance near here.
FD_EPS = 1e-6

#: Guard added to the relative-error denominator (seed lesson's definition).
REL_ERR_GUARD = 1e-12

#: A gradient passes the finite-difference check below this max relative error.
GRAD_MAX_REL_ERR = 1e-4

#: Step and tolerance of the random-projection (directional) check. The
#: directional derivative is a single number, so its relative error is
#: compared against a slightly looser bar than elementwise checks.
PROJECTION_EPS = 1e-6
PROJECTION_REL_TOL = 1e-4
#: Step of the check that a gradient is its own loss's: larger than the general one, since a
#: correct loss summed over 50,000 logits in another order carries rounding of about 1e-11,
#: which a step of 1e-6 would blow up to 1e-5 of the change; the loss is smooth, so the
#: central difference's own error (step squared) stays far below the tolerance.
GRADIENT_CHECK_EPS = 1e-5

#: Agreement with the float64 reference for forward values and gradients.
VALUE_RTOL = 1e-6
VALUE_ATOL = 1e-9

#: Scalar answers (losses, perplexities, log-probabilities).
SCALAR_RTOL = 1e-6
SCALAR_ATOL = 1e-9

#: Question bank: a numeric answer is accepted within this relative distance
#: (plus the absolute guard below), so a reply rounded to four significant
#: figures passes while a slip in the second figure does not.
QUESTION_RTOL = 1e-3
QUESTION_ATOL = 1e-9

#: Question bank: every distractor differs from the answer and from the other
#: choices by at least this relative gap, ten times the acceptance tolerance,
#: so choices printed to four significant figures never look alike.
QUESTION_DISTRACTOR_GAP = 1e-2

#: Question bank stress test: an answer recomputed by an independent path
#: must match the stored one this closely (answers are stored to 12
#: significant digits).
QUESTION_CHECK_RTOL = 1e-9
QUESTION_CHECK_ATOL = 1e-12

#: Question bank stress test: step and absolute tolerance of the pure-Python
#: central-difference check of a dlogits entry (truncation ~eps², round-off
#: ~1e-16/eps, both far below the tolerance for entries of size 1e-3..1).
QUESTION_FD_EPS = 1e-5
QUESTION_FD_ATOL = 1e-8

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

#: Agreement with the float64 reference for forward values and gradients.
VALUE_RTOL = 1e-6
VALUE_ATOL = 1e-9

#: Scalar answers (losses, perplexities, log-probabilities).
SCALAR_RTOL = 1e-6
SCALAR_ATOL = 1e-9

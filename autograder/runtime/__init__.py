"""Everything that runs at grading time, and nothing else.

The sandbox, the channel, the judge and its comparisons, the tolerances, the
diagnosis, the hidden-suite engine, the otter plugin and the grading of
submissions. The autograder zip's runtime wheel is made from exactly this
package (see ``autograder.build.contents``); tooling (build, report, question
bank, command line) stays outside it.
"""

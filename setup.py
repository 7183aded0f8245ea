"""Install the LM-head grader: the ``autograder``, ``question_bank`` and
``solutions`` packages, the templates and assignment specs as package data,
and the ``grader`` console script."""
import re
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent
VERSION = re.search(r'__version__ = "([^"]+)"', (HERE / "autograder" / "__init__.py").read_text()).group(1)

# The top-level templates/ and assignments/ folders are installed inside the
# autograder package so that a regular (non-editable) install finds them too.
DATA_PACKAGES = {"autograder.templates": "templates", "autograder.assignments": "assignments"}

setup(
    name="lmhead-grader",
    version=VERSION,
    description="Auto-graded assignments and exam practice for the language-modelling head, "
                "its cross-entropy loss, gradient, perplexity and GPT parameter counts.",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["autograder", "autograder.*", "question_bank", "question_bank.*",
                                    "solutions", "solutions.*"]) + list(DATA_PACKAGES),
    package_dir=DATA_PACKAGES,
    # The self-check page's script and styles are real .js/.css files, shipped as data.
    package_data={**{name: ["**/*"] for name in DATA_PACKAGES},
                  "question_bank.exporters": ["static/*.js", "static/*.css"]},
    include_package_data=True,
    install_requires=[
        "numpy>=1.24,<3",
        "pytest>=7.4,<10",
        "otter-grader[grading]>=7.0.0,<7.1",
        "jinja2>=3.1,<4",
        "click>=8.1,<9",
        "PyYAML>=6.0,<7",
        "nbformat>=5.9,<6",
        "matplotlib>=3.7,<4",
        "latex2mathml>=3.81,<4",
        "threadpoolctl>=3.1,<4",
        # The instructor's group notes are Markdown, rendered for the report and Moodle's comments.
        "markdown-it-py>=3,<5",
    ],
    extras_require={
        "test": ["pytest-timeout>=2.2,<3", "pytest-xdist>=3.5,<4", "playwright>=1.40,<2", "markdown-it-py>=3,<5",
                 "pypdf>=4,<8"],
    },
    entry_points={"console_scripts": ["grader=autograder.cli:main"]},
)

"""Does every command of the ``grader`` CLI have help text, and does the group answer --version?"""
import click
from click.testing import CliRunner

from autograder import __version__
from autograder.cli import main


def _walk(group: click.Group, prefix=()):
    context = click.Context(group)
    for name in group.list_commands(context):       # commands in other modules load when asked for
        command = group.get_command(context, name)
        yield prefix + (name,), command
        if isinstance(command, click.Group):
            yield from _walk(command, prefix + (name,))


def test_version():
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert __version__ in result.output


def test_every_command_has_help_and_is_listed():
    runner = CliRunner()
    top = runner.invoke(main, ["--help"])
    assert top.exit_code == 0
    for path, command in _walk(main):
        assert command.help and command.help.strip(), f"`grader {' '.join(path)}` has no help text"
        if len(path) == 1:
            assert path[0] in top.output
        result = runner.invoke(main, [*path, "--help"])
        assert result.exit_code == 0, result.output

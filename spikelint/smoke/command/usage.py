"""What a ``--cmd`` must hold before anything runs: a mistake found here costs a second, found after the
reference run it cost a minute and read as a verdict about the job (exit 2, never a traceback)."""

from __future__ import annotations

import re
import shlex

from spikelint.smoke.command.process import CommandError

CMD_PLACEHOLDERS = ("steps", "every", "ckpt", "seed", "resume")
RESUME_PLACEHOLDERS = ("steps", "every", "ckpt", "seed", "step")
# ``{ckpt {resume}``: a placeholder's name after a brace that the name does not close
UNCLOSED = re.compile(r"\{(steps|every|ckpt|seed|resume|step)\b(?!\})")
NAMED = re.compile(r"\{(\w+)\}")


def checked_command(cmd: str, resume_arg: str, progress_regex: str, loss_regex: str) -> None:
    """Raise :class:`CommandError` naming the option and the fix when the command cannot be run as given."""
    for flag, text, allowed in (("--cmd", cmd, CMD_PLACEHOLDERS), ("--resume-arg", resume_arg, RESUME_PLACEHOLDERS)):
        try:
            shlex.split(text)
        except ValueError as error:
            raise CommandError(f"{flag} is not valid shell quoting ({str(error).lower()}): {text}") from None
        unclosed = UNCLOSED.search(text)
        if unclosed is not None:
            raise CommandError(f"{flag} has an unclosed placeholder at {text[unclosed.start():unclosed.end() + 8]!r}: "
                               f"write {{{unclosed.group(1)}}}")
        unknown = sorted(set(NAMED.findall(text)) - set(allowed))
        if "step" in unknown and flag == "--cmd":
            raise CommandError("{step} belongs in --resume-arg (the newest checkpoint's step when a resume starts), "
                               "not in --cmd, where a fresh run has no step to put there")
        if unknown:
            raise CommandError(f"{flag} uses unknown placeholder(s) {', '.join('{' + name + '}' for name in unknown)}; "
                               f"it knows {', '.join('{' + name + '}' for name in allowed)}")
    if "{ckpt}" not in cmd:
        raise CommandError("--cmd has no {ckpt}: smoke gives the reference and every interrupted run a folder of its "
                           "own through it; without it they share the folder your command writes, and a resume loads "
                           "another run's checkpoint (e.g. --ckpt-dir {ckpt}, --output_dir {ckpt})")
    for flag, pattern, example in (("--progress-regex", progress_regex, r"step[=: ](\d+)"),
                                   ("--loss-regex", loss_regex, r"loss[=: ](\S+)")):
        try:
            groups = re.compile(pattern).groups
        except re.error as error:
            raise CommandError(f"{flag} is not a regular expression: {error}") from None
        if groups < 1:
            raise CommandError(f"{flag} {pattern!r} has no group: put parentheses around what it reads, "
                               f"e.g. {example}")

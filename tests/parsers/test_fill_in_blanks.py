"""Recipes ship launch scripts with fill-in blanks (``export HF_TOKEN=<YOUR_HF_TOKEN>``): to bash
those are redirects, so the script does not parse; spikelint reads it as if the blank were filled
in, keeps its other rules, and still reports a script that is broken for another reason."""

from __future__ import annotations

from spikelint.engine import lint_snippet

RECIPE = """#!/bin/bash
export HF_TOKEN=<YOUR_HF_TOKEN>
CODE_DIR=<PATH_TO_CODE>  # adjust to your checkout
cd "$CODE_DIR"
python train.py --output_dir /ckpt 2>&1 | tee train.log
"""


def _places(name: str, text: str) -> list[tuple[int, str]]:
    return [(finding.line, finding.rule) for finding in lint_snippet(name, text)]


def test_a_recipe_with_fill_in_blanks_is_not_unparseable_and_keeps_its_script_rules() -> None:
    places = _places("launcher.sh", RECIPE)
    assert not [rule for _, rule in places if rule == "SPK001"]
    assert (5, "SPK501") in places


def test_a_script_broken_elsewhere_keeps_its_parse_error_at_the_real_place() -> None:
    places = _places("launcher.sh", RECIPE + 'echo "never closed\n')
    assert (6, "SPK001") in places


def test_a_real_redirect_mistake_is_still_an_error() -> None:
    assert (2, "SPK001") in _places("launcher.sh", "#!/bin/bash\necho done >\n")


def test_an_input_redirect_from_a_file_is_ordinary_shell() -> None:
    assert not [rule for _, rule in _places("launcher.sh", "#!/bin/bash\nsort <input.txt >sorted.txt\n")
                if rule == "SPK001"]


def test_a_blank_of_several_words_at_the_end_of_a_documented_command_is_filled_in() -> None:
    places = _places("usage.sh", "#!/bin/bash\npython run.py --model <model name>\npython run.py | tee run.log\n")
    assert not [rule for _, rule in places if rule == "SPK001"]
    assert (3, "SPK501") in places

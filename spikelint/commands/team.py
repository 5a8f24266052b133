"""``spikelint rules test [DIR]`` and ``spikelint model FILE``: what a team rule author runs.

``rules test`` checks every example of every rule (and team secret pattern) the way ``check`` would: each
``bad`` example must give exactly one finding of its rule, each ``good`` none. ``model`` prints what the rules
see of a file, with the position of each field, so a rule is written against what is really there.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from spikelint.config import Config
from spikelint.config import ConfigError
from spikelint.config import load_config

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _parser(prog: str, description: str) -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog=prog, description=description)


def rules_test_main(argv: Sequence[str]) -> int:
    parser = _parser("spikelint rules test", "run the examples of the team rules (docs/team-rules.md)")
    parser.add_argument("folder", nargs="?", metavar="DIR",
                        help="the rules folder (default: rules_dir of the configuration, else .spikelint/rules)")
    parser.add_argument("--config", metavar="FILE", help="configuration file (default: the nearest)")
    args = parser.parse_args(list(argv))
    from spikelint.team import rule_set_for

    try:
        config = load_config(args.config)
        if args.folder is not None:
            if not Path(args.folder).is_dir():
                sys.stderr.write(f"spikelint rules test: {args.folder}: no such folder (name the folder that holds "
                                 "the rule files)\n")
                return EXIT_USAGE
            config = replace(config, rules_dir=args.folder, root=".", added_rules_dirs=())
        elif config.team_rules_folder() is None:
            sys.stderr.write("spikelint rules test: no team rules: no .spikelint/rules folder here and no rules_dir "
                             "in the configuration (name the folder: spikelint rules test DIR)\n")
            return EXIT_USAGE
        rule_set = rule_set_for(config)
    except ConfigError as error:
        sys.stderr.write(f"spikelint rules test: {error}\n")
        return EXIT_USAGE
    failures, passed = [], 0
    for rule in rule_set.rules:
        for expected, examples in ((1, rule.bad), (0, rule.good)):
            for example in examples:
                found = _findings_of(config, rule.id, example.path, example.content)
                own = [text for text in found if text.startswith(f"{rule.id} ")]
                # an SPK004 is the rule failing to judge the example, never the finding a bad example wants
                if len(own) == expected and len(found) == len(own):
                    passed += 1
                    continue
                kind = "bad" if expected else "good"
                shown = "; ".join(found) if found else "none"
                failures.append(f"{rule.file}:{example.line}: {rule.id} {kind} example {example.path}: expected "
                                f"{expected} finding(s) of {rule.id}, got {len(own)} ({shown})")
    for pattern in rule_set.secrets:
        for expected, examples in ((1, pattern.bad), (0, pattern.good)):
            for example in examples:
                found = [text for text in _findings_of(config, "SPK201", example.path, example.content)
                         if f"team pattern {pattern.id}" in text]
                if len(found) == expected:
                    passed += 1
                    continue
                kind = "bad" if expected else "good"
                failures.append(f"{pattern.file}:{example.line}: secret pattern {pattern.id} {kind} example "
                                f"{example.path}: expected {expected} finding(s), got {len(found)}")
    for failure in failures:
        sys.stdout.write(f"FAIL {failure}\n")
    total = passed + len(failures)
    without = [rule.id for rule in rule_set.rules if not rule.bad and not rule.good] + \
        [pattern.id for pattern in rule_set.secrets if not pattern.bad and not pattern.good]
    note = f"; without examples: {', '.join(without)}" if without else ""
    patterns = f" and {len(rule_set.secrets)} secret patterns" if rule_set.secrets else ""
    sys.stdout.write(f"{passed} passed, {len(failures)} failed ({total} examples of {len(rule_set.rules)} "
                     f"rules{patterns}){note}\n")
    return EXIT_FAILED if failures else EXIT_OK


def _findings_of(config: Config, rule_id: str, path: str, content: str) -> list[str]:
    """The findings of ``rule_id`` (and SPK004, which says the rule could not be judged) on one example file; the
    messages are shown masked (a secret pattern's example holds a token)."""
    from spikelint.engine import check_paths

    with tempfile.TemporaryDirectory(prefix="spikelint-example-") as scratch:
        target = Path(scratch) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        folder = config.team_rules_folder()
        assert folder is not None
        settings = Config(select=(rule_id, "SPK004"), rules_dir=str(folder[0].resolve()), root=scratch)
        result = check_paths([str(target)], settings, cwd=Path(scratch), jobs=1)
    return [f"{finding.rule} line {finding.line}: {finding.message}" for finding in result.report.findings]


def model_main(argv: Sequence[str]) -> int:
    parser = _parser("spikelint model", "print the workloads of FILE as team rules see them (JSON, with positions)")
    parser.add_argument("file", metavar="FILE")
    parser.add_argument("--config", metavar="FILE", help="configuration file (default: the nearest)")
    args = parser.parse_args(list(argv))
    from spikelint.adapters import workloads_in
    from spikelint.documents import read_document
    from spikelint.files import detect_kind
    from spikelint.model import SourceFile
    from spikelint.team.view import located_json
    from spikelint.team.view import workload_view

    path = Path(args.file)
    if path.is_dir():
        sys.stderr.write(f"spikelint model: {args.file} is a folder: name one file (spikelint model "
                         f"{Path(args.file, 'job.yaml').as_posix()})\n")
        return EXIT_USAGE
    if not path.is_file():
        sys.stderr.write(f"spikelint model: {args.file}: no such file\n")
        return EXIT_USAGE
    try:
        config = load_config(args.config, path.parent)
        head = path.open("rb").read(128).decode("utf-8", "replace")
    except (ConfigError, OSError) as error:
        sys.stderr.write(f"spikelint model: {error}\n")
        return EXIT_USAGE
    from spikelint.options import mask_team_shapes

    mask_team_shapes(config)  # the workloads' env values and arguments are printed as written
    shown = Path(args.file).as_posix()
    document = read_document(SourceFile(shown, str(path.resolve()), detect_kind(shown, head), path.stat().st_size))
    unreadable = [problem for problem in document.problems if problem.rule in ("SPK001", "SPK003")]
    if unreadable and not document.trees and document.parsed is None:
        sys.stderr.write(f"spikelint model: {shown}:{unreadable[0].line}: {unreadable[0].message}\n")
        return EXIT_USAGE
    views = [located_json(workload_view(workload), shown) for workload in workloads_in(document, config)]
    json.dump(views, sys.stdout, indent=2, sort_keys=False)
    sys.stdout.write("\n")
    if not views:
        sys.stderr.write(f"spikelint model: {shown}: no workload in this file (a Kubernetes, Kubeflow, JobSet or "
                         "Run:ai object, a Run:ai REST body or runai command, or an #SBATCH script)\n")
    return EXIT_OK

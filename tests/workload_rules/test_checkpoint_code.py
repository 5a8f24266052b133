"""SPK403 on training code: what counts as a training checkpoint, and what it must hold."""

from __future__ import annotations

import pytest

from tests.workload_rules.conftest import lint
from tests.workload_rules.conftest import pairs


def spk403(code: str) -> set[tuple[int, str]]:
    return pairs(lint("trainer/loop.py", code))


@pytest.mark.parametrize("code", [
    "import torch as T\ndef f(model, opt, step, p):\n    T.save({'model': model.state_dict(), 'opt': opt.state_dict()}, p)\n",
    "from torch import save\nsave({'model': m.state_dict()}, 'x.pt')\n",
    "import torch\ntorch.save(obj={'net': net.module.state_dict(), 'epoch': 1}, f='x.pt')\n",
    "import torch\ndef f(m, p):\n    c = dict(model=m.state_dict())\n    c['global_step'] = 3\n    torch.save(c, p)\n",
])
def test_incomplete_checkpoints(code: str) -> None:
    lines = {line for line, rule in spk403(code) if rule == "SPK403"}
    assert len(lines) == 1


@pytest.mark.parametrize("code", [
    # complete: optimizer and step; no scheduler in the function
    "import torch\ndef f(m, o, step, p):\n    torch.save({'model': m.state_dict(), 'optimizer': o.state_dict(), 'step': step}, p)\n",
    # a bare state_dict is an export, not a dict literal
    "import torch\ntorch.save(model.state_dict(), 'final.pt')\n",
    # not a training checkpoint: no module state_dict()
    "import torch\ntorch.save({'losses': losses, 'epoch': 3}, 'metrics.pt')\n",
    # the name is rebound to something that is not a dict literal before the save
    "import torch\ndef f(m, p):\n    s = {'model': m.state_dict()}\n    s = build_state(m)\n    torch.save(s, p)\n",
    # accelerate's own full-state save is not a dict literal
    "def f(accelerator, d):\n    accelerator.save_state(d)\n",
])
def test_complete_or_unrelated_saves(code: str) -> None:
    assert spk403(code) == set()


def test_scheduler_is_required_only_when_the_function_has_one() -> None:
    with_scheduler = ("import torch\ndef f(m, o, step, p):\n    sched = torch.optim.lr_scheduler.StepLR(o, 10)\n"
                      "    torch.save({'model': m.state_dict(), 'optimizer': o.state_dict(), 'step': step}, p)\n")
    findings = lint("trainer/loop.py", with_scheduler)
    assert [(f.line, f.rule) for f in findings] == [(4, "SPK403")]
    assert "LR scheduler" in findings[0].message and "optimizer state" not in findings[0].message


def test_finding_points_at_the_saved_object() -> None:
    code = "import torch\ndef f(m, p):\n    state = {'model': m.state_dict()}\n    torch.save(state, p)\n"
    finding = lint("trainer/loop.py", code)[0]
    assert (finding.line, finding.column) == (4, len("    torch.save(") + 1)


# --------------------------------------------------------------------------- a checkpoint that a resume reads

LOOP = ("import torch\n"
        "def train(model, loader, optimizer, epochs, out):\n"
        "    for epoch in range(epochs):\n"
        "        for batch in loader:\n"
        "            model(batch).sum().backward()\n"
        "            optimizer.step()\n")


@pytest.mark.parametrize("code, line", [
    # a checkpoint name inside the training loop stays a checkpoint, even when it also says best
    (LOOP + "        torch.save({'model': model.state_dict(), 'epoch': epoch}, out + '/ckpt_best.pt')\n", 7),
    # a periodic save flag is not the --save-model export flag
    (LOOP + "        if epoch % args.save_model_every == 0:\n"
            "            torch.save({'model': model.state_dict(), 'epoch': epoch}, out)\n", 8),
    # saved after the loop by an interruption handler, for the next run to resume from
    ("import torch\ndef train(model, loader, optimizer, out):\n    try:\n        for batch in loader:\n"
     "            model(batch).sum().backward()\n            optimizer.step()\n    except KeyboardInterrupt:\n"
     "        torch.save({'model': model.state_dict()}, out + '/interrupted.pt')\n", 8),
    # a bare state_dict saved inside the training loop
    (LOOP + "        torch.save(model.state_dict(), f'{out}/epoch_{epoch}.pt')\n", 7),
    # a scheduler built around a lambda is an object with state (LambdaLR's last_epoch)
    ("import torch\ndef train(model, optimizer, loader, out):\n"
     "    sched = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, s / 100))\n"
     "    for step, batch in enumerate(loader):\n        model(batch).sum().backward()\n        optimizer.step()\n"
     "        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'step': step}, out)\n", 7),
    # module-level training loop, the save inside it
    ("import torch\nfor step in range(10):\n    loss.backward()\n    opt.step()\n"
     "    torch.save({'model': net.state_dict(), 'step': step}, 'ckpt.pt')\n", 5),
])
def test_checkpoints_a_resume_reads(code: str, line: int) -> None:
    assert spk403(code) == {(line, "SPK403")}


@pytest.mark.parametrize("code", [
    # after the training loop: the finished model (a dict literal or a bare state_dict)
    LOOP + "    torch.save({'model': model.state_dict(), 'epoch': epoch}, out + '/ckpt.pt')\n",
    LOOP + "    torch.save(model.state_dict(), out)\n",
    # module level, after the training loop
    "import torch\nfor step in range(10):\n    loss.backward()\n    opt.step()\ntorch.save(net.state_dict(), 'net.pt')\n",
    # the loop calls a training function rather than backward() itself
    "import torch\ndef main(model, optimizer, epochs):\n    for epoch in range(epochs):\n"
    "        train_one_epoch(model, optimizer)\n    torch.save({'model': model.state_dict()}, 'out.pt')\n",
    # under the --save-model flag
    LOOP + "        if args.save_model:\n            torch.save(model.state_dict(), 'mnist_cnn.pt')\n",
    # an export name inside the loop, without a checkpoint word
    LOOP + "        torch.save({'model': model.state_dict()}, out + '/best_model.pt')\n",
    LOOP + "        torch.save(model.state_dict(), os.path.join(out, 'model.pt'))\n",
    # the saved variable or the path's variable says final / export
    "import torch\ndef f(model, optimizer, out):\n    final_state = {'model': model.state_dict()}\n"
    "    torch.save(final_state, out)\n",
    "import torch\ndef f(model, optimizer, out):\n    export_path = os.path.join(out, 'weights.pt')\n"
    "    torch.save(model.state_dict(), export_path)\n",
    # optimizer and scheduler saved beside the weights, the step in a JSON file
    LOOP + "        torch.save(model.state_dict(), f'{out}/model_weights.pt')\n"
           "        torch.save(optimizer.state_dict(), f'{out}/optimizer.pt')\n"
           "        json.dump({'epoch': epoch}, open(f'{out}/trainer_state.json', 'w'))\n",
    LOOP + "        torch.save({'model': model.state_dict()}, out + '/w.pt')\n"
           "        torch.save(opt_state, os.path.join(out, 'optimizer.pt'))\n"
           "        (Path(out) / 'meta.json').write_text(json.dumps({'step': epoch}))\n",
    # the step is in the file name
    "import torch\ndef f(model, optimizer, loader, out):\n    for step, batch in enumerate(loader):\n"
    "        model(batch).sum().backward()\n        optimizer.step()\n"
    "        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()},\n"
    "                   f'{out}/checkpoint.iter_{step}.pt')\n",
    "import torch\ndef f(model, optimizer, it, out):\n    path = os.path.join(out, 'ckpt_{:06d}.pt'.format(it))\n"
    "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, path)\n",
    # the learning rate is a stateless function of the step
    "import torch\ndef cosine_schedule(it):\n    return 1e-3 * min(1.0, it / 100)\n"
    "def f(model, optimizer, loader, out):\n    for it, batch in enumerate(loader):\n"
    "        lr = cosine_schedule(it)\n        for group in optimizer.param_groups:\n            group['lr'] = lr\n"
    "        model(batch).sum().backward()\n        optimizer.step()\n"
    "        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'iter': it}, out)\n",
    "import torch\ndef f(model, optimizer, loader, lr_schedule, out):\n    for it, batch in enumerate(loader):\n"
    "        optimizer.param_groups[0]['lr'] = lr_schedule[it]\n"
    "        model(batch).sum().backward()\n        optimizer.step()\n"
    "        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'iter': it}, out)\n",
    "import torch\nlr_schedule = lambda s: 0.1 * 0.5 ** (s // 1000)\n"
    "def f(model, optimizer, loader, out):\n    for step, batch in enumerate(loader):\n"
    "        optimizer.param_groups[0]['lr'] = lr_schedule(step)\n"
    "        model(batch).sum().backward()\n        optimizer.step()\n"
    "        torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'step': step}, out)\n",
])
def test_exports_and_state_saved_elsewhere(code: str) -> None:
    assert spk403(code) == set()


def test_only_what_is_still_missing_is_named() -> None:
    # the epoch in the file name counts as the step; the optimizer is still missing
    code = LOOP + "        torch.save({'model': model.state_dict()}, f'{out}/ckpt_e{epoch}.pt')\n"
    findings = lint("trainer/loop.py", code)
    assert [(f.line, f.rule) for f in findings] == [(7, "SPK403")]
    assert "optimizer state" in findings[0].message and "step/epoch" not in findings[0].message
    # the optimizer saved beside it; the step is still missing
    code = LOOP + ("        torch.save({'model': model.state_dict()}, out + '/ckpt.pt')\n"
                   "        torch.save(optimizer.state_dict(), out + '/optimizer.pt')\n")
    findings = lint("trainer/loop.py", code)
    assert [(f.line, f.rule) for f in findings] == [(7, "SPK403")]
    assert "step/epoch" in findings[0].message and "optimizer state" not in findings[0].message


def test_a_training_state_file_written_beside_the_weights_holds_the_step() -> None:
    from spikelint.engine import lint_snippet

    code = ("import pickle\nimport torch\n\n\ndef save(self, path):\n"
            "    state = {'model': self.model.state_dict(), 'optimizer': self.optimizer.state_dict()}\n"
            "    torch.save(state, path / 'weights.pth')\n"
            "    with path.joinpath('trial_state.pkl').open('wb') as handle:\n        pickle.dump(vars(self.run), handle)\n")
    assert [f.rule for f in lint_snippet("trial.py", code) if f.rule == "SPK403"] == []
    alone = code.replace("trial_state.pkl", "notes.pkl")
    assert [f.line for f in lint_snippet("trial.py", alone) if f.rule == "SPK403"] == [7]


def test_step_given_to_the_checkpoint_api_as_metadata_counts() -> None:
    from spikelint.engine import lint_snippet

    code = ("import torch\n\n\ndef fit(model, optimizer, loader, ctx):\n    for epoch in range(3):\n"
            "        for batch in loader:\n            model(batch).backward()\n            optimizer.step()\n"
            "        with ctx.checkpoint.store_path({'epoch': epoch}) as (path, _):\n"
            "            torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, path / 'c.pt')\n")
    assert [f.rule for f in lint_snippet("fit.py", code) if f.rule == "SPK403"] == []


FIT_LOOP = ("import torch\n\n\ndef fit(model, loader, fold):\n    optimizer = {optimizer}\n    for epoch in range(3):\n"
        "        for batch in loader:\n            model(batch).sum().backward()\n            optimizer.step()\n"
        "        torch.save({{'model': model.state_dict(), 'epoch': epoch}}, {path})\n")


@pytest.mark.parametrize("optimizer, path, fires", [
    ("torch.optim.SGD(model.parameters(), 0.1)", "f'ckpt-{epoch}.pt'", False),
    ("torch.optim.SGD(model.parameters(), 0.1, momentum=0.9)", "f'ckpt-{epoch}.pt'", True),
    ("torch.optim.AdamW(model.parameters())", "f'ckpt-{epoch}.pt'", True),
    ("torch.optim.AdamW(model.parameters())", "f'fold-{fold}_epoch-{epoch}_f1-{f1:.2f}.pt'", False),
    ("torch.optim.AdamW(model.parameters())", "f'checkpoint-{epoch}_f1-{f1:.2f}.pt'", True),
], ids=["plain-sgd", "sgd-momentum", "adamw", "named-by-scores", "checkpoint-named-with-scores"])
def test_stateless_optimizers_and_score_named_models(optimizer: str, path: str, fires: bool) -> None:
    from spikelint.engine import lint_snippet

    code = FIT_LOOP.format(optimizer=optimizer, path=path)
    assert bool([f for f in lint_snippet("fit.py", code) if f.rule == "SPK403"]) == fires


HELPER = ("import torch\n\n\ndef keep(model, stats, path):\n"
          "    torch.save({{'model': model.state_dict(), 'stats': stats}}, path)\n\n\n"
          "def fit(model, loader, stats, out):\n    optimizer = torch.optim.AdamW(model.parameters())\n"
          "    lowest = float('inf')\n    for epoch in range(3):\n        for batch in loader:\n"
          "            model(batch).sum().backward()\n            optimizer.step()\n"
          "        score = evaluate(model)\n{call}")


@pytest.mark.parametrize("call, fires", [
    ("        if score < lowest:\n            lowest = score\n            keep(model, stats, out)\n", False),
    ("        if score >= self.best_score:\n            keep(model, stats, out)\n", False),
    ("        if is_best:\n            keep(model, stats, out)\n", False),
    # called every epoch, or also outside the improvement test: a checkpoint
    ("        keep(model, stats, out)\n", True),
    ("        if score < lowest:\n            keep(model, stats, out)\n        else:\n"
     "            keep(model, stats, out + '.last')\n", True),
    ("        if epoch % 2 == 0:\n            keep(model, stats, out)\n", True),
    # called from nowhere in this file: the helper alone decides
    ("        pass\n", True),
], ids=["below-lowest", "above-best-attribute", "is-best-flag", "every-epoch", "else-branch-too",
        "every-other-epoch", "not-called-here"])
def test_a_helper_called_only_when_the_score_improves_keeps_the_best_model(call: str, fires: bool) -> None:
    from spikelint.engine import lint_snippet

    lines = [f.line for f in lint_snippet("fit.py", HELPER.format(call=call)) if f.rule == "SPK403"]
    assert lines == ([5] if fires else [])


@pytest.mark.parametrize("inner, fires", [
    ("run_epoch", False),  # a function of its own that trains, defined inside: the save after its loop is final
    ("train_loop_fn", False),
    ("report", True),  # a nested function that trains nothing: no training loop to be after
])
def test_a_save_after_a_loop_that_trains_through_a_nested_function_is_final(inner: str, fires: bool) -> None:
    from spikelint.engine import lint_snippet

    body = "        loss = model(batch).sum()\n        loss.backward()\n        optimizer.step()\n" \
        if inner != "report" else "        print(batch)\n"
    code = (f"import torch\n\n\ndef fit(model, loader, epochs, out):\n    optimizer = build(model)\n\n"
            f"    def {inner}(batches):\n      for batch in batches:\n{body}\n"
            f"    for epoch in range(epochs):\n        {inner}(loader)\n"
            "    torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, out)\n")
    lines = [f.line for f in lint_snippet("fit.py", code) if f.rule == "SPK403"]
    assert lines == ([13] if fires else [])


# --------------------------------------------------------------------------- state saved beside the model

TRAINER_SAVE = '''import os
import torch


class Checkpointer:
    def __init__(self, trainer):
        self.t = trainer

    def save(self, ckpt_dir, rank):
        save_training_states(ckpt_dir, self.t.model, self.t.optimizer)
        torch.save(self.t.lr_scheduler.state_dict(), os.path.join(ckpt_dir, "scheduler.pt"))
        torch.save({WHAT}, os.path.join(ckpt_dir, f"rank_{rank}.pt"))
        loss = self.t.loss
        loss.backward()
'''


@pytest.mark.parametrize("what", ["self.t.train_batch_generator.state_dict()", "self.t.sampler.state_dict()",
                                  "self.t.data_loader.state_dict()"])
def test_the_data_pipelines_state_is_not_the_models_weights(what: str) -> None:
    assert spk403(TRAINER_SAVE.replace("{WHAT}", what)) == set()


def test_the_model_saved_the_same_way_beside_an_optimizer_handed_to_a_save_helper_is_complete() -> None:
    code = TRAINER_SAVE.replace("{WHAT}", "{'model': self.t.model.state_dict(), 'step': 3}").replace(
        "save_training_states", "save_checkpoint_files")
    assert spk403(code) == set()


def test_the_model_saved_without_the_optimizer_anywhere_still_fires() -> None:
    code = TRAINER_SAVE.replace("{WHAT}", "{'model': self.t.model.state_dict(), 'step': 3}").replace(
        "        save_training_states(ckpt_dir, self.t.model, self.t.optimizer)\n", "")
    assert {rule for _, rule in spk403(code)} == {"SPK403"}


# --------------------------------------------------------------------------- schedules made by a factory (open_clip)

SCHEDULES = ("import math\n\n\ndef cosine_lr(optimizer, base_lr, warmup, steps):\n"
             "    def _adjust(step):\n        lr = base_lr * 0.5 * (1 + math.cos(math.pi * step / steps))\n"
             "        for group in optimizer.param_groups:\n            group['lr'] = lr\n        return lr\n"
             "    return _adjust\n\n\ndef warmup_only(optimizer, base_lr, warmup):\n"
             "    return lambda step: base_lr * min(1.0, (step + 1) / warmup)\n\n\n"
             "def real_one(optimizer, steps):\n    import torch\n"
             "    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, steps)\n")
MAIN = ("import torch\n{imports}\n\n\ndef main(args, model, optimizer, loader):\n    scheduler = None\n"
        "    if args.lr_scheduler == 'cosine':\n        scheduler = {factory}(optimizer, args.lr, 100, 1000)\n"
        "    for epoch in range(args.epochs):\n        train_one_epoch(model, loader, optimizer, scheduler, epoch)\n"
        "        ckpt = {{'epoch': epoch, 'state_dict': model.state_dict(), 'optimizer': optimizer.state_dict()}}\n"
        "        torch.save(ckpt, f'{{args.out}}/epoch_{{epoch}}.pt')\n")


@pytest.mark.parametrize("imports, factory, fires", [
    ("from trainlib.scheduler import cosine_lr", "cosine_lr", False),  # returns a function of the step
    ("from .scheduler import warmup_only as warm", "warm", False),  # relative, renamed, a lambda
    ("from trainlib.scheduler import real_one", "real_one", True),  # returns a torch scheduler object
    ("from elsewhere.scheduler import cosine_lr", "cosine_lr", True),  # not the tree's module: unknown
])
def test_a_schedule_a_factory_of_the_tree_returns_as_a_function_holds_no_state(imports: str, factory: str,
                                                                                 fires: bool) -> None:
    from spikelint.engine import lint_snippet

    code = MAIN.format(imports=imports, factory=factory)
    found = [(f.line, "LR scheduler" in f.message) for f in
             lint_snippet("src/trainlib/main.py", code, extra_files={"src/trainlib/scheduler.py": SCHEDULES})
             if f.rule == "SPK403"]
    assert found == ([(12, True)] if fires else [])


def test_a_setting_that_names_a_schedule_is_not_a_scheduler() -> None:
    """``args.lr_scheduler == 'cosine'`` is a string in the run's settings; ``self.lr_scheduler`` is an object."""
    from spikelint.engine import lint_snippet

    settings = MAIN.format(imports="", factory="make").replace("    scheduler = None\n", "").replace(
        "scheduler = make(optimizer, args.lr, 100, 1000)", "lr = args.lr").replace(
        "optimizer, scheduler, epoch", "optimizer, args.lr_scheduler, epoch")
    assert [f.line for f in lint_snippet("main.py", settings) if f.rule == "SPK403"] == []
    owned = settings.replace("args.lr_scheduler, epoch", "self.lr_scheduler, epoch")
    assert [f.line for f in lint_snippet("main.py", owned) if f.rule == "SPK403"] == [11]


@pytest.mark.parametrize("code, fires", [
    # a test's stand-in for the checkpoint API: it saves whatever the state dict it is given holds
    ("import torch\ndef fake_save(state_dict, checkpoint_id):\n    sd = {}\n"
     "    for key, val in state_dict.items():\n        if hasattr(val, 'state_dict'):\n"
     "            sd[key] = val.state_dict()\n    torch.save(sd, checkpoint_id)\n", False),
    ("import torch\ndef save(model, extra, path):\n    torch.save({**extra, 'model': model.state_dict()}, path)\n",
     False),
    # keys a CONSTANT names are read as written
    ("import torch\ndef save(model, optimizer, path, step):\n    sd = {'step': step}\n"
     "    sd[MODEL_KEY] = model.state_dict()\n    torch.save(sd, path)\n", True),
])
def test_a_dict_whose_keys_are_computed_holds_what_this_code_cannot_see(code: str, fires: bool) -> None:
    from spikelint.engine import lint_snippet

    assert bool([f for f in lint_snippet("ckpt.py", code) if f.rule == "SPK403"]) == fires

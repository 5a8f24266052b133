"""Prepare a tiny local run of nanoGPT's own train.py (karpathy/nanoGPT), nothing downloaded.

    python bench/frameworks/nanogpt_setup.py path/to/nanoGPT/train.py

Next to the given train.py (an unmodified copy with model.py, configurator.py and
data/shakespeare_char/prepare.py beside it) this writes:

* data/shakespeare_char/input.txt: a small local text (the copied .py and .md files of
  the nanoGPT folder, repeated to about 40 kB), so that prepare.py finds input.txt and never
  downloads; then it runs that prepare.py unmodified, which writes train.bin, val.bin, meta.pkl;
* config/tiny_char.py: config/train_shakespeare_char.py shrunk to seconds on a CPU
  (n_layer=1, n_head=2, n_embd=32, block_size=16, batch_size=4, device='cpu', compile=False,
  dtype='float32'), checkpointing (out_dir/ckpt.pt) at every eval, i.e. every eval_interval iters.

The training command is then, from the train.py folder:

    python train.py config/tiny_char.py --out_dir=DIR [--max_iters=N --eval_interval=K] [--init_from=resume]
"""

import pathlib
import subprocess
import sys

TINY_CONFIG = """\
# tiny_char: config/train_shakespeare_char.py shrunk so that a run takes seconds on a CPU
out_dir = 'out-tiny-char'
eval_interval = 8       # evaluate, and save out_dir/ckpt.pt, every 8 iters
eval_iters = 2
log_interval = 1        # an 'iter N: loss L' line every iter
always_save_checkpoint = True   # train.py's default: save at every eval (not only on a better val loss)
wandb_log = False

dataset = 'shakespeare_char'
gradient_accumulation_steps = 1
batch_size = 4
block_size = 16

n_layer = 1
n_head = 2
n_embd = 32
dropout = 0.2

learning_rate = 1e-3
max_iters = 24
lr_decay_iters = 24
min_lr = 1e-4
beta2 = 0.99
warmup_iters = 4

device = 'cpu'
compile = False
dtype = 'float32'
"""


def main(train_py: str) -> None:
    root = pathlib.Path(train_py).resolve().parent
    data = root / "data" / "shakespeare_char"
    text = "".join(p.read_text() for p in sorted(root.rglob("*.py")) if p.name != "tiny_char.py")
    text = (text * (40_000 // len(text) + 1))[:40_000]
    (data / "input.txt").write_text(text)
    subprocess.run([sys.executable, str(data / "prepare.py")], check=True)
    (root / "config" / "tiny_char.py").write_text(TINY_CONFIG)
    print(f"wrote {data}/{{input.txt,train.bin,val.bin,meta.pkl}} and {root}/config/tiny_char.py")


if __name__ == "__main__":
    main(sys.argv[1])

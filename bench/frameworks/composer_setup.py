"""Make tiny local inputs for llm-foundry's scripts/train/train.py (MosaicML Composer's Trainer, autoresume).

    python bench/frameworks/composer_setup.py WORK

Composer's own repository has no script that trains with a Trainer and takes autoresume,
save_folder and run_name from the command line (its examples hard-code MNIST downloads, and
`composer` is only a launcher), so the Composer job measured is llm-foundry's
scripts/train/train.py, unmodified, which builds a Composer `Trainer` from a YAML and passes
`autoresume` through. Run it with the environment that has llm-foundry installed (it brings
mosaicml, mosaicml-streaming, transformers and tokenizers; nothing else is needed here).

This writes, from fixed seeds (so every run reads the same bytes), nothing downloaded:

- WORK/tokenizer/: a word-level Hugging Face tokenizer (`tokenizers` WordLevel, 128 words plus
  <pad>, <eos>, <unk>), saved with `save_pretrained`, so `AutoTokenizer.from_pretrained(path)` loads it;
- WORK/data/train/: a local MDS dataset (mosaicml-streaming `MDSWriter`, one `text` column) of
  64 samples, each longer than `max_seq_len` = 32 tokens; with 4 samples a batch an epoch is 16 batches;
- WORK/tiny.yaml: llm-foundry's scripts/train/yamls/pretrain/mpt-small-cpu.yaml shrunk: an
  `mpt_causal_lm` built from the config (d_model 32, 2 layers, vocab 131), the local tokenizer and
  data, fp32, no eval loader, 2 microbatches of 2 per step, `num_workers: 0` (so
  `prefetch_factor: null`, which torch requires without workers), console log every batch.

Then, as llm-foundry users run it (the remaining keys on the command line, OmegaConf dotlist):

    cd WORK && HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 python LLM_FOUNDRY/scripts/train/train.py tiny.yaml \\
        max_duration=24ba save_interval=4ba save_folder=CKPT run_name=tiny autoresume=true

which saves CKPT/ep{epoch}-ba{batch}-rank0.pt every 4 batches (and the `latest-rank0.pt` symlink)
and, started again with the same command, resumes by itself from the newest checkpoint there.
"""

import pathlib
import random
import sys

WORDS = [f"w{i:03d}" for i in range(128)]

YAML = """\
variables:
  data_local: {data}
  max_seq_len: 32
  global_seed: 17

max_seq_len: ${{variables.max_seq_len}}
run_name: tiny

model:
  name: mpt_causal_lm
  init_device: cpu
  d_model: 32
  n_heads: 2
  n_layers: 2
  expansion_ratio: 2
  max_seq_len: ${{variables.max_seq_len}}
  vocab_size: {vocab}
  attn_config:
    attn_impl: torch
  loss_fn: torch_crossentropy

tokenizer:
  name: {tokenizer}
  kwargs:
    model_max_length: ${{variables.max_seq_len}}

train_loader:
  name: text
  dataset:
    local: ${{variables.data_local}}
    split: train
    shuffle: true
    max_seq_len: ${{variables.max_seq_len}}
    shuffle_seed: ${{variables.global_seed}}
  drop_last: true
  num_workers: 0
  prefetch_factor: null
  persistent_workers: false

scheduler:
  name: cosine_with_warmup
  t_warmup: 4ba
  alpha_f: 0.1

optimizer:
  name: decoupled_adamw
  lr: 3.0e-3
  betas:
  - 0.9
  - 0.95
  eps: 1.0e-08
  weight_decay: 0.0

algorithms:
  gradient_clipping:
    clipping_type: norm
    clipping_threshold: 1.0

max_duration: 24ba
global_train_batch_size: 4
device_train_microbatch_size: 2
device_eval_batch_size: 2
seed: ${{variables.global_seed}}
precision: fp32

progress_bar: false
log_to_console: true
console_log_interval: 1ba

save_interval: 4ba
save_overwrite: false
"""


def main(work: str) -> None:
    from streaming import MDSWriter
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import PreTrainedTokenizerFast

    root = pathlib.Path(work).resolve()
    root.mkdir(parents=True, exist_ok=True)

    vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
    for w in WORDS:
        vocab[w] = len(vocab)
    tok = Tokenizer(WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    fast.save_pretrained(str(root / "tokenizer"))

    # A text with structure to learn: each word is mostly followed by one of two successors.
    rng = random.Random(0)
    out = root / "data" / "train"
    if out.exists():
        raise SystemExit(f"{out} exists: use a new WORK folder")
    with MDSWriter(out=str(out), columns={"text": "str"}, compression=None) as writer:
        for _ in range(64):
            i, words = rng.randrange(len(WORDS)), []
            for _ in range(40):
                words.append(WORDS[i])
                i = (i * 5 + rng.choice((1, 2, 1, 2, 7))) % len(WORDS)
            writer.write({"text": " ".join(words)})

    (root / "tiny.yaml").write_text(YAML.format(data=root / "data", vocab=len(vocab), tokenizer=root / "tokenizer"))
    print(f"wrote {root / 'tokenizer'}, {out} (64 samples), {root / 'tiny.yaml'}")


if __name__ == "__main__":
    main(sys.argv[1])

"""Tiny local inputs for transformers' run_clm.py / run_clm_no_trainer.py (nothing downloaded).

    python bench/frameworks/hf_clm_setup.py path/to/transformers/examples/pytorch/language-modeling/run_clm.py --work /tmp/hf

writes, under WORK (default /tmp/hf-clm):

- data/train.txt, data/validation.txt: sentences drawn from a fixed word list with random.Random(0);
- tokenizer/: a byte-level BPE tokenizer (vocabulary 300) trained here with the `tokenizers` library and saved
  as a PreTrainedTokenizerFast (model_max_length 64), loadable with AutoTokenizer.from_pretrained(dir);
- config/config.json: a GPT-2 config with n_layer=1, n_embd=32, n_head=2, n_positions=64 and the tokenizer's
  vocabulary (for run_clm_no_trainer.py --config_name);
- config_overrides.txt: the same settings as run_clm.py's --config_overrides string (with --model_type gpt2).

The script path argument is only checked to exist (every setup in this folder takes it).
"""

import argparse
import os
import random

WORDS = ("the a one two cat dog bird fish runs jumps sees eats red blue green small big old new river tree "
         "house road sun moon under over near far quickly slowly and but then".split())


def sentences(rng, n):
    for _ in range(n):
        yield " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12))) + "."


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script")
    parser.add_argument("--work", default="/tmp/hf-clm")
    parser.add_argument("--train-lines", type=int, default=90)
    args = parser.parse_args()
    if not os.path.isfile(args.script):
        raise SystemExit(f"no such script: {args.script}")

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, PreTrainedTokenizerFast

    rng = random.Random(0)
    data = os.path.join(args.work, "data")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "train.txt"), "w") as f:
        f.write("\n".join(sentences(rng, args.train_lines)) + "\n")
    with open(os.path.join(data, "validation.txt"), "w") as f:
        f.write("\n".join(sentences(rng, 40)) + "\n")

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train([os.path.join(data, "train.txt")], trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                   unk_token="<|endoftext|>", model_max_length=64)
    fast.save_pretrained(os.path.join(args.work, "tokenizer"))

    vocab = len(fast)
    eos = fast.convert_tokens_to_ids("<|endoftext|>")
    settings = dict(n_layer=1, n_embd=32, n_head=2, n_positions=64, vocab_size=vocab,
                    bos_token_id=eos, eos_token_id=eos)
    GPT2Config(**settings).save_pretrained(os.path.join(args.work, "config"))
    with open(os.path.join(args.work, "config_overrides.txt"), "w") as f:
        f.write(",".join(f"{k}={v}" for k, v in settings.items()))

    ids = sum(len(fast(line)["input_ids"]) for line in open(os.path.join(data, "train.txt")))
    print(f"work={args.work} vocab={vocab} train_tokens={ids} blocks_of_32={ids // 32}")


if __name__ == "__main__":
    main()

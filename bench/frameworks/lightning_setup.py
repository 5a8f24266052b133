"""Make a tiny local ImageFolder for Lightning's own examples/pytorch/domain_templates/imagenet.py.

    python bench/frameworks/lightning_setup.py path/to/lightning/examples/pytorch/domain_templates/imagenet.py

imagenet.py reads DATA/train/<class>/*.png and DATA/val/<class>/*.png with torchvision's
ImageFolder. This writes DATA = <folder of imagenet.py>/tiny-imagenet: two classes of 32x32
PNG noise images (class "red" brighter in the red channel, "blue" in the blue one), 16 train and
4 val images per class, from a fixed NumPy seed, so that every run reads the same bytes.
The script is then run as Lightning users run it, through its LightningCLI, e.g.:

    python imagenet.py fit --model.data_path DATA --model.arch mobilenet_v3_small \
        --model.batch_size 2 --model.workers 0 --trainer.max_epochs 3 \
        --trainer.limit_train_batches 4 --trainer.limit_val_batches 2 \
        --trainer.default_root_dir DIR [--ckpt_path DIR/checkpoints/epoch=...ckpt]
"""

import pathlib
import sys

import numpy as np
from PIL import Image


def main(script: str) -> None:
    root = pathlib.Path(script).resolve().parent / "tiny-imagenet"
    rng = np.random.default_rng(0)
    for split, n in (("train", 16), ("val", 4)):
        for cls, channel in (("blue", 2), ("red", 0)):
            folder = root / split / cls
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(n):
                img = rng.integers(0, 128, size=(32, 32, 3), dtype=np.uint8)
                img[..., channel] += 120
                Image.fromarray(img).save(folder / f"{i:03d}.png")
    print(f"wrote {root}")


if __name__ == "__main__":
    main(sys.argv[1])

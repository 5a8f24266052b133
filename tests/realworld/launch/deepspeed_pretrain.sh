#!/bin/bash
# ZeRO-3 pretraining with the deepspeed launcher across the hostfile's nodes.
set -e
OUTPUT=/shared/checkpoints/gpt-neox-$(date +%Y%m%d-%H%M)  # expect: SPK406
# expect+6: SPK203
# expect+1: SPK501
deepspeed --hostfile hostfile --num_nodes 4 --num_gpus 8 pretrain_gpt.py \
  --deepspeed_config ../configs/deepspeed/ds_zero3.json \
  --save "$OUTPUT" --save-interval 2000 \
  --load "$OUTPUT" \
  --wandb_api_key 85qVAn3KDmICgX7byiodY8OyXebcmSL8LyUymdgQ \
  --log-interval 10 | tee -a /shared/logs/neox.log

python tools/convert_to_hf.py --input "$OUTPUT" > convert.log  # expect: SPK502

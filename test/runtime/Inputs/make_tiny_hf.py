"""make_tiny_hf.py DIR [--vocab N] [--tokenizer T.json] [--positions P]: saves
a small random transformers GPT-2 (config.json + model.safetensors, the
files --export-hf writes) into DIR, with tokenizer.json copied beside it
when given, for scripts/sample.py."""
import argparse
import os
import shutil

import torch
from transformers import GPT2Config, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("--vocab", type=int, default=256)
parser.add_argument("--positions", type=int, default=64)
parser.add_argument("--tokenizer")
args = parser.parse_args()
torch.manual_seed(0)
config = GPT2Config(vocab_size=args.vocab, n_positions=args.positions, n_embd=32,
                    n_layer=2, n_head=2, bos_token_id=None, eos_token_id=None)
GPT2LMHeadModel(config).save_pretrained(args.out, safe_serialization=True)
if args.tokenizer:
    shutil.copy(args.tokenizer, os.path.join(args.out, "tokenizer.json"))
print(f"{args.out}: GPT-2, vocabulary {args.vocab}, {args.positions} positions")

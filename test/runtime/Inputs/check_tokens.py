"""check_tokens.py PREFIX --tokenizer T.json INPUT... [--field NAME]
[--val-fraction F] [--shard-tokens N] [--eos-token TOKEN] [--decoded FILE]:
checks what scripts/prepare_data.py wrote for PREFIX against the tokenizers
library itself, without sharing its code:

- each document's tokens are Tokenizer.encode(doc).ids (the post-processor's
  specials included) plus EOS (--eos-token) when they do not end with it,
  in input order; the last round(F*D) documents (at least one) make val;
- the files are PREFIX_SPLIT.bin when a split fits one shard, else
  PREFIX_SPLIT_000000.bin, ... of exactly N tokens but the last, and no
  others exist; their headers are llm.c's uint16 or uint32 form (by the
  vocabulary) with the right counts and sizes;
- PREFIX.json describes them and the tokenizer;
- --decoded FILE (prepare_data.py --decode of val's first file) is the
  tokenizer's decoding of that file's ids.
"""
import argparse
import glob
import hashlib
import json
import os
import re
import struct
import sys

from tokenizers import Tokenizer


def documents(paths, field):
    """.jsonl, .parquet or text files (one document each)."""
    for path in paths:
        if path.endswith(".parquet"):
            import pyarrow.parquet as pq
            yield from pq.read_table(path).column(field).to_pylist()
        elif path.endswith(".jsonl"):
            with open(path, encoding="utf-8") as f:
                for line in f:
                    yield json.loads(line)[field]
        else:  # a text file: one document
            with open(path, encoding="utf-8") as f:
                yield f.read()


def read_file(path):
    with open(path, "rb") as f:
        data = f.read()
    magic, version, count = struct.unpack_from("<3i", data)
    if any(struct.unpack_from("<253i", data, 12)):
        sys.exit(f"{path}: header words 3-255 are not 0")
    width = {(20240520, 1): 2, (20240801, 7): 4}.get((magic, version))
    if width is None:
        sys.exit(f"{path}: magic {magic} version {version}")
    if len(data) != 1024 + width * count:
        sys.exit(f"{path}: {count} tokens of {width} bytes but {len(data)} bytes")
    code = "H" if width == 2 else "I"
    return (magic, version), list(struct.unpack_from(f"<{count}{code}", data, 1024))


def fail(message):
    sys.exit(f"FAIL: {message}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("prefix")
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--field", default="text")
    parser.add_argument("--val-fraction", type=float, default=0.1)
    parser.add_argument("--shard-tokens", type=int, default=100_000_000)
    parser.add_argument("--eos-token", required=True)
    parser.add_argument("--decoded")
    args = parser.parse_args()

    tok = Tokenizer.from_file(args.tokenizer)
    eos = tok.token_to_id(args.eos_token)
    expected = []
    for doc in documents(args.inputs, args.field):
        ids = tok.encode(doc).ids
        expected.append(ids if ids and ids[-1] == eos else ids + [eos])
    n_val = max(1, round(args.val_fraction * len(expected)))
    parts = {"train": expected[:-n_val], "val": expected[-n_val:]}

    vocab = tok.get_vocab_size(with_added_tokens=True)
    dtype = "uint16" if vocab <= 65536 else "uint32"
    form = (20240520, 1) if dtype == "uint16" else (20240801, 7)
    with open(args.prefix + ".json") as f:
        meta = json.load(f)
    with open(args.tokenizer, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    t = meta["tokenizer"]
    if (meta["format"], meta["version"], meta["dtype"]) != ("zero-opt-tokens", 1, dtype):
        fail(f"sidecar format {meta['format']} {meta['version']} {meta['dtype']}")
    if (t["kind"], t["sha256"], t["vocab_size"], t["eos_id"]) != ("huggingface", sha, vocab, eos):
        fail(f"sidecar tokenizer {t}")
    specials = {a.content: i for i, a in tok.get_added_tokens_decoder().items() if a.special}
    if t["special_ids"] != specials:
        fail(f"special_ids {t['special_ids']} != {specials}")

    base = os.path.basename(args.prefix)
    shards = {}
    for split, docs in parts.items():
        names = sorted(os.path.basename(p) for p in glob.glob(glob.escape(args.prefix) + f"_{split}*"))
        if len(names) == 1 and names[0] != f"{base}_{split}.bin":
            fail(f"{names}: one file should be {base}_{split}.bin")
        if len(names) > 1 and names != [f"{base}_{split}_{i:06d}.bin" for i in range(len(names))]:
            fail(f"{split} shards are named {names}")
        tokens, counts = [], []
        for name in names:
            got_form, ids = read_file(os.path.join(os.path.dirname(args.prefix), name))
            if got_form != form:
                fail(f"{name}: magic/version {got_form}, expected {form} ({dtype})")
            tokens += ids
            counts.append(len(ids))
        if any(c != args.shard_tokens for c in counts[:-1]) or counts[-1] > args.shard_tokens:
            fail(f"{split} shard sizes {counts} with --shard-tokens={args.shard_tokens}")
        want = [i for d in docs for i in d]
        if tokens != want:
            at = next((i for i, (a, b) in enumerate(zip(tokens, want)) if a != b),
                      min(len(tokens), len(want)))
            fail(f"{split}: {len(tokens)} tokens, expected {len(want)}; first difference at {at}")
        entry = meta["splits"][split]
        if entry != {"documents": len(docs), "tokens": len(want),
                     "files": [{"name": n, "tokens": c} for n, c in zip(names, counts)]}:
            fail(f"sidecar {split}: {entry}")
        shards[split] = (names, counts, tokens)
    left = [p for p in os.listdir(os.path.dirname(args.prefix) or ".") if p.endswith(".tmp")]
    if left:
        fail(f"temporary files left: {left}")
    if args.decoded:
        names, counts, tokens = shards["val"]
        with open(args.decoded, "rb") as f:
            text = f.read().decode("utf-8")
        if text != tok.decode(tokens[:counts[0]], skip_special_tokens=False):
            fail(f"{args.decoded} is not the decoding of {names[0]}")

    high = sum(1 for split in shards for i in shards[split][2] if i > 65535)
    print(f"tokens ok: {len(expected)} documents (train {len(parts['train'])}, "
          f"val {len(parts['val'])}), {dtype} magic {form[0]} version {form[1]}")
    for split in ("train", "val"):
        print(f"{split}: {len(shards[split][0])} files, tokens {shards[split][1]}")
    print(f"bos_id {t['bos_id']} eos_id {t['eos_id']}, ids above 65535: {high}")
    if args.decoded:
        print("decoded ok")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Prints a model's continuation of a prompt, with Hugging Face transformers.

  python3 scripts/sample.py build/export --prompt "ROMEO:" [--max-new-tokens=100]
                            [--temperature=0] [--seed=S] [--tokenizer=PATH|bytes]

DIR is a directory written by the runtime's --export-hf (config.json and
model.safetensors), or any transformers causal LM directory; the model runs
on the CPU. The prompt is tokenized with the tokenizer the model was trained
with (the one scripts/prepare_data.py used): --tokenizer=PATH (a
tokenizer.json or a directory holding one) or bytes; by default
DIR/tokenizer.json when it exists, else bytes when the model's vocabulary
has at most 256 ids, else an error asking for --tokenizer.

--temperature=0 (the default) is greedy; T > 0 samples with that
temperature (--seed makes it repeatable). The context is cropped to the
model's positions (n_positions / max_position_embeddings): the prompt keeps
its last tokens when it is too long, and at most the remaining positions are
generated. Prints the prompt followed by the continuation; a byte-level
model's bytes are decoded as UTF-8 with replacement characters where a
sample is not valid UTF-8.

Needs torch and transformers (scripts/install-deps.sh), and `tokenizers`
with a tokenizer.json.
"""
import argparse
import json
import os
import sys


class BytesCodec:
    """A token per byte (prepare_data.py's default)."""

    def encode(self, text):
        return list(text.encode("utf-8"))

    def decode(self, ids):
        return bytes(i for i in ids if i < 256).decode("utf-8", errors="replace")


class HFCodec:
    """A tokenizer.json. Prompts get no special tokens: a prompt is the start
    of a document, so only the BOS the post-processor puts first is kept."""

    def __init__(self, path):
        from tokenizers import Tokenizer
        self.tok = Tokenizer.from_file(path)
        enc = self.tok.encode("a", add_special_tokens=True)
        self.bos = enc.ids[0] if enc.ids and enc.special_tokens_mask[0] else None

    def encode(self, text):
        ids = self.tok.encode(text, add_special_tokens=False).ids
        return ([self.bos] if self.bos is not None else []) + ids

    def decode(self, ids):
        return self.tok.decode(ids, skip_special_tokens=True)


def fail(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def model_config(directory):
    path = os.path.join(directory, "config.json")
    if not os.path.isfile(path):
        fail(f"{directory}: no config.json (a --export-hf directory holds config.json "
             "and model.safetensors)")
    with open(path) as f:
        return json.load(f)


def choose_codec(spec, directory, config):
    if spec == "bytes":
        return BytesCodec()
    if spec:
        path = os.path.join(spec, "tokenizer.json") if os.path.isdir(spec) else spec
        if not os.path.isfile(path):
            fail(f"{spec}: no tokenizer.json")
        return HFCodec(path)
    beside = os.path.join(directory, "tokenizer.json")
    if os.path.isfile(beside):
        return HFCodec(beside)
    vocab = config.get("vocab_size")
    if vocab is not None and vocab <= 256:
        return BytesCodec()
    fail(f"{directory}: vocabulary {vocab} is not bytes and there is no tokenizer.json: "
         "pass --tokenizer=PATH (the one scripts/prepare_data.py used)")


def context_length(config):
    for key in ("n_positions", "max_position_embeddings", "n_ctx"):
        if isinstance(config.get(key), int):
            return config[key]
    return None


def generate(model, ids, max_new_tokens, limit, pad, sampling):
    """The new tokens after ids. Positions beyond the model's would index
    past its position table, so, like nanoGPT, the context is cropped to its
    last tokens: generation goes in pieces of at most half the positions,
    each seeing the latest limit - piece tokens."""
    import torch

    ids = list(ids)
    new = []
    while len(new) < max_new_tokens:
        piece = max_new_tokens - len(new)
        if limit:
            piece = min(piece, max(1, limit // 2))
            context = ids[-(limit - piece):]
        else:
            context = ids
        with torch.no_grad():
            out = model.generate(
                torch.tensor([context]),
                attention_mask=torch.ones(1, len(context), dtype=torch.long),
                max_new_tokens=piece, pad_token_id=pad, **sampling)
        got = out[0, len(context):].tolist()
        ids += got
        new += got
        if len(got) < piece:  # the model ended the document
            break
    return new


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", metavar="DIR", help="a --export-hf directory")
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--max-new-tokens", type=int, default=100)
    parser.add_argument("--temperature", type=float, default=0.0,
                        help="0 (default): greedy; > 0: sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tokenizer", metavar="PATH|bytes",
                        help="default: DIR/tokenizer.json, else bytes for a "
                             "vocabulary of at most 256")
    args = parser.parse_args()
    if args.temperature < 0:
        parser.error("--temperature must be at least 0")
    if args.max_new_tokens < 0:
        parser.error("--max-new-tokens must be at least 0")

    config = model_config(args.model)
    codec = choose_codec(args.tokenizer, args.model, config)
    import torch
    import transformers
    from transformers import AutoModelForCausalLM

    # The answer goes to stdout; keep transformers' loading bars and notes
    # off stderr too, so an error there stands out.
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()

    torch.manual_seed(args.seed)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.float32)
    model.eval()

    ids = codec.encode(args.prompt)
    if not ids:
        fail("the prompt is empty (a model needs at least one token to continue)")
    eos = config.get("eos_token_id")
    pad = (eos[0] if isinstance(eos, list) and eos else eos) or 0
    sampling = {"do_sample": True, "temperature": args.temperature, "top_k": 0} \
        if args.temperature > 0 else {"do_sample": False}
    continuation = generate(model, ids, args.max_new_tokens, context_length(config),
                            pad, sampling)
    # Decoded with the prompt, so that the tokenizer joins the two as it
    # joins any two tokens (a word-level one puts a space between them);
    # the prompt itself is printed as given.
    whole, head = codec.decode(ids + continuation), codec.decode(ids)
    text = args.prompt + whole[len(head):] if whole.startswith(head) else whole
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()

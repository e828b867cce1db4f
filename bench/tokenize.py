#!/usr/bin/env python3
"""How fast scripts/prepare_data.py tokenizes, against the tokenizers
library alone, and how much memory it takes.

  python3 bench/tokenize.py [--gigabytes 2] [--tokenizer PATH] [--vocab 8000]
                            [--workdir build/bench-tokenize] [--keep]

1. Writes a .jsonl corpus of at least --gigabytes GB (documents of 1-6
   paragraphs of data/shakespeare.txt drawn at random, repeated; reused when
   a corpus of that size is already in --workdir).
2. Trains a byte-level BPE tokenizer of --vocab ids on data/shakespeare.txt
   (or takes --tokenizer), with a <s> BOS post-processor like Llama's.
3. Measures (a) the tokenizers library's own encode_batch over the same
   documents in this process: the jsonl read and parsed in batches of 1000
   documents, the encodings counted and dropped; and (b) prepare_data.py on
   the corpus, as a subprocess: wall time, and its peak RSS
   (getrusage(RUSAGE_CHILDREN).ru_maxrss, the largest child's).
4. Prints the tokens/s of both, their ratio (target: prepare_data at least
   0.9x) and the peak RSS (target: under 1 GB), as a markdown table.
"""
import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHAKESPEARE = os.path.join(ROOT, "data", "shakespeare.txt")
BATCH = 1000


def make_corpus(path, gigabytes, seed=1):
    target = int(gigabytes * 1e9)
    if os.path.exists(path) and os.path.getsize(path) >= target:
        print(f"corpus: {path} ({os.path.getsize(path) / 1e9:.2f} GB, reused)")
        return
    with open(SHAKESPEARE, encoding="utf-8") as f:
        paragraphs = [p for p in f.read().split("\n\n") if p.strip()]
    rng = random.Random(seed)
    written = 0
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        while written < target:
            lines = []
            for _ in range(10000):
                doc = "\n\n".join(rng.choice(paragraphs) for _ in range(rng.randint(1, 6)))
                lines.append(json.dumps({"text": doc}))
            chunk = "\n".join(lines) + "\n"
            f.write(chunk)
            written += len(chunk)
    os.replace(tmp, path)
    print(f"corpus: {path} ({written / 1e9:.2f} GB, written)")


def train_tokenizer(path, vocab):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train([SHAKESPEARE], trainers.BpeTrainer(
        vocab_size=vocab, special_tokens=["<s>", "</s>"], show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", 0)])
    tok.save(path)
    print(f"tokenizer: {path} (byte-level BPE, vocabulary "
          f"{tok.get_vocab_size(with_added_tokens=True)}, trained on {SHAKESPEARE})")


def encode_batch_rate(tokenizer_path, corpus):
    """The tokenizers library alone: read, parse, encode_batch, count."""
    from tokenizers import Tokenizer
    tok = Tokenizer.from_file(tokenizer_path)
    tokens = documents = 0
    start = time.perf_counter()
    with open(corpus, "rb") as f:
        batch = []
        for line in f:
            batch.append(json.loads(line)["text"])
            if len(batch) == BATCH:
                tokens += sum(len(e) for e in tok.encode_batch(batch))
                documents += len(batch)
                batch = []
        if batch:
            tokens += sum(len(e) for e in tok.encode_batch(batch))
            documents += len(batch)
    return documents, tokens, time.perf_counter() - start


def prepare_data_rate(tokenizer_path, corpus, prefix):
    command = [sys.executable, os.path.join(ROOT, "scripts", "prepare_data.py"),
               f"--tokenizer={tokenizer_path}", "--quiet", corpus, "-o", prefix]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    with open(prefix + ".json") as f:
        splits = json.load(f)["splits"]
    tokens = sum(s["tokens"] for s in splits.values())
    documents = sum(s["documents"] for s in splits.values())
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return documents, tokens, seconds, rss, command


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gigabytes", type=float, default=2.0)
    parser.add_argument("--tokenizer", help="a tokenizer.json (default: train one)")
    parser.add_argument("--vocab", type=int, default=8000)
    parser.add_argument("--workdir", default=os.path.join(ROOT, "build", "bench-tokenize"))
    parser.add_argument("--keep", action="store_true", help="keep the token files")
    args = parser.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    corpus = os.path.join(args.workdir, f"corpus-{args.gigabytes:g}GB.jsonl")
    make_corpus(corpus, args.gigabytes)
    tokenizer = args.tokenizer or os.path.join(args.workdir, f"bpe-{args.vocab}.json")
    if not args.tokenizer:
        train_tokenizer(tokenizer, args.vocab)

    docs_a, tokens_a, seconds_a = encode_batch_rate(tokenizer, corpus)
    print(f"encode_batch: {docs_a} documents, {tokens_a} tokens in {seconds_a:.1f} s")
    prefix = os.path.join(args.workdir, "out", "corpus")
    docs_b, tokens_b, seconds_b, rss, command = prepare_data_rate(tokenizer, corpus, prefix)
    print(f"prepare_data: {docs_b} documents, {tokens_b} tokens in {seconds_b:.1f} s")
    if not args.keep:
        for name in os.listdir(os.path.dirname(prefix)):
            if name.startswith("corpus"):
                os.remove(os.path.join(os.path.dirname(prefix), name))

    rate_a, rate_b = tokens_a / seconds_a, tokens_b / seconds_b
    size = os.path.getsize(corpus)
    print()
    print(f"Corpus {size / 1e9:.2f} GB, {docs_a:,} documents; {os.cpu_count()} cores, {cpu_name()}")
    print()
    print("| | tokens | seconds | tokens/s | peak RSS |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(f"| tokenizers encode_batch (in process) | {tokens_a:,} | {seconds_a:.1f} "
          f"| {rate_a:,.0f} | |")
    print(f"| scripts/prepare_data.py | {tokens_b:,} | {seconds_b:.1f} | {rate_b:,.0f} "
          f"| {rss / 2**20:,.0f} MiB |")
    print()
    print(f"ratio prepare_data / encode_batch: {rate_b / rate_a:.3f} (target >= 0.9); "
          f"peak RSS {rss / 2**20:,.0f} MiB (target < 1024)")
    print("prepare_data command:", " ".join(command))
    # prepare_data counts one EOS a document more than encode_batch gives.
    if tokens_b != tokens_a + docs_a:
        print(f"note: token counts differ by {tokens_b - tokens_a} "
              f"(expected {docs_a}, one EOS a document)")


if __name__ == "__main__":
    main()

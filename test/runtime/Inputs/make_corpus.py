"""make_corpus.py OUT [--kind shakespeare|words] [--documents N] [--field NAME]
[--seed S]: writes N documents (default 40) as a .jsonl (one {"NAME": text}
a line) or, when OUT ends in .parquet, a parquet file with a NAME column.

  shakespeare   consecutive runs of 1-6 paragraphs (blank-line separated)
                of data/shakespeare.txt, in order, wrapping around
  words         5-60 words of make_tokenizers.py's wordlevel vocabulary
                (w0 ... w{--words - 1}), about half of them above id 65535
"""
import argparse
import json
import os
import random

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")


def shakespeare_documents(n, rng):
    with open(os.path.join(ROOT, "data", "shakespeare.txt"), encoding="utf-8") as f:
        paragraphs = [p for p in f.read().split("\n\n") if p.strip()]
    docs, at = [], 0
    for _ in range(n):
        k = rng.randint(1, 6)
        docs.append("\n\n".join(paragraphs[(at + i) % len(paragraphs)] for i in range(k)))
        at += k
    return docs


def word_documents(n, rng, words):
    high = max(words - 65534, 0)  # words whose ids (index + 2) exceed 65535
    docs = []
    for _ in range(n):
        picks = [rng.randrange(words - high, words) if high and rng.random() < 0.5
                 else rng.randrange(words) for _ in range(rng.randint(5, 60))]
        docs.append(" ".join(f"w{i}" for i in picks))
    return docs


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--kind", choices=["shakespeare", "words"], default="shakespeare")
    parser.add_argument("--documents", type=int, default=40)
    parser.add_argument("--field", default="text")
    parser.add_argument("--words", type=int, default=70000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    docs = (shakespeare_documents(args.documents, rng) if args.kind == "shakespeare"
            else word_documents(args.documents, rng, args.words))
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    if args.out.endswith(".parquet"):
        import pyarrow as pa
        import pyarrow.parquet as pq
        # Small row groups, so reading crosses several.
        pq.write_table(pa.table({args.field: docs}), args.out, row_group_size=7)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            for d in docs:
                f.write(json.dumps({args.field: d}) + "\n")
    print(f"{args.out}: {len(docs)} documents")


if __name__ == "__main__":
    main()

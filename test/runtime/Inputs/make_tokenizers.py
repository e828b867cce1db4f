"""make_tokenizers.py KIND OUT.json: writes a Hugging Face tokenizer.json for
the tests (and for test/e2e, which trains models on what it tokenizes).

  bpe [--text FILE] [--vocab N]   byte-level BPE (tokenizers' BpeTrainer,
      ByteLevel pre-tokenizer and decoder) trained on FILE (default
      data/shakespeare.txt), vocabulary N (default 3000) including <s> (id 0)
      and </s> (id 1); a TemplateProcessing post-processor puts <s> before a
      document and nothing after it, like Llama's, so the EOS comes from the
      vocabulary (</s>).
  wordlevel [--words N] [--end-token T]   a WordLevel vocabulary of N
      (default 70000) synthetic words w0 ... w{N-1} (ids 2 ... N+1) split on
      whitespace, with [UNK] (0) and T (1, default <|endoftext|>) and no
      post-processor: with N > 65534 its ids need the uint32 token files.
      (--end-token=<stop> makes one whose end token no rule finds.)
"""
import argparse
import os

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..")


def bpe(text, vocab):
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<s>", "</s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train([text], trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 0)])
    return tok


def wordlevel(words, end_token):
    vocab = {"[UNK]": 0, end_token: 1}
    vocab.update({f"w{i}": i + 2 for i in range(words)})
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(["[UNK]", end_token])
    return tok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["bpe", "wordlevel"])
    parser.add_argument("out")
    parser.add_argument("--text", default=os.path.join(ROOT, "data", "shakespeare.txt"))
    parser.add_argument("--vocab", type=int, default=3000)
    parser.add_argument("--words", type=int, default=70000)
    parser.add_argument("--end-token", default="<|endoftext|>")
    args = parser.parse_args()
    tok = bpe(args.text, args.vocab) if args.kind == "bpe" else wordlevel(args.words, args.end_token)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    tok.save(args.out)
    print(f"{args.out}: {args.kind}, vocabulary {tok.get_vocab_size(with_added_tokens=True)}")


if __name__ == "__main__":
    main()

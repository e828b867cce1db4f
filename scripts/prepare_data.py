#!/usr/bin/env python3
"""Turns text into token files for language-model programs.

  python3 scripts/prepare_data.py data/shakespeare.txt -o build/data/shakespeare
  python3 scripts/prepare_data.py --tokenizer=MODEL_DIR 'corpus/*.jsonl' -o build/data/c
  python3 scripts/prepare_data.py --decode build/data/shakespeare_val.bin

Inputs (one or more): text files (one document each, read whole), .jsonl
files (one document a line, in the field --text-field, default "text"),
.parquet files (the same field, read in batches), directories (their files,
recursively, in sorted name order) and globs of any of these.

Tokenizer: --tokenizer=bytes (the default) makes a token of each byte
(vocabulary 256, no special tokens, so decoding gives the text back exactly).
--tokenizer=PATH (a Hugging Face tokenizer.json, or a model directory holding
one) tokenizes each document as the model family expects: with the BOS/EOS
its post-processor adds, and an EOS appended when the result does not end
with one, so documents never run together unmarked. The EOS comes from
--eos-token, else tokenizer_config.json / generation_config.json /
config.json beside tokenizer.json, else the post-processor's trailing special
token, else a well-known end token in the vocabulary.

Outputs, for the output prefix -o PREFIX:
  PREFIX_train.bin, PREFIX_val.bin   when a split fits one shard, else
  PREFIX_train_000000.bin, ...       shards of exactly --shard-tokens tokens
                                     (the last one shorter; a document may
                                     span two: the runtime reads them in name
                                     order as one stream)
  PREFIX.json                        the sidecar tying the files to their
                                     tokenizer (format below)
The last round(f*D) of the D documents go to val (f = --val-fraction; at
least one); a single document is split by tokens instead: the first
floor(len*(1-f)) train, the rest val.

Token files are llm.c's:
  256 little-endian int32: [0] = magic, [1] = version, [2] = number of
  tokens N, the rest 0; then N little-endian ids:
  uint16 (magic 20240520, version 1) when the vocabulary fits 65536 ids,
  else uint32 (magic 20240801, version 7, llm.c's Llama-3 form);
  one dtype for every file of a run.

The sidecar PREFIX.json:
  {"format": "zero-opt-tokens", "version": 1, "dtype": "uint16"|"uint32",
   "tokenizer": {"kind": "bytes"|"huggingface", "path", "sha256" (of
     tokenizer.json), "class" ("bytes", "BPE", "WordLevel", ...),
     "vocab_size" (the id bound), "bos_id" (what the post-processor puts
     first, or null), "eos_id", "special_ids": {token: id}},
   "splits": {"train": {"documents", "tokens", "files": [{"name", "tokens"}]},
              "val": {...}}}
The runtime finds it from a token file's name (strip
`_(train|val)(_[0-9]+)?.bin`, add ".json") and checks the model's vocabulary
and each file's count against it.

Every file is written beside its name (NAME.tmp) and renamed when the whole
run has succeeded, so a failed run leaves nothing behind; stale shards of an
earlier run with the same prefix are removed then. Memory stays flat: the
documents are streamed in batches, and tokens are written as they come.

`--decode FILE.bin` prints a token file (either dtype) back: bytes in bytes
mode, the decoded text with --tokenizer. Errors are one line, `error: ...`,
naming the file (and line), and exit 1.

Needs numpy; --tokenizer=PATH needs `tokenizers`, .parquet inputs `pyarrow`,
the progress bar `tqdm` (scripts/install-deps.sh installs them).
"""
import argparse
import glob
import hashlib
import json
import os
import queue
import re
import sys
import threading
import time

import numpy as np

HEADER_INTS = 256
HEADER_BYTES = 4 * HEADER_INTS
# (magic, version) -> little-endian id dtype, llm.c's two forms.
FORMATS = {
    (20240520, 1): np.dtype("<u2"),
    (20240801, 7): np.dtype("<u4"),
}
MAGIC_OF = {"uint16": (20240520, 1), "uint32": (20240801, 7)}
WELL_KNOWN_EOS = ("<|endoftext|>", "</s>", "<|end_of_text|>", "<eos>", "<|im_end|>")
# A batch is handed to encode_batch (which runs on every core) when it holds
# this many documents or bytes: large enough that the thread pool stays busy,
# small enough that the encodings (tens of bytes per token) stay well under
# the memory of a corpus.
BATCH_DOCUMENTS = 1000
BATCH_BYTES = 4 << 20
SPLITS = ("train", "val")


class DataError(Exception):
    """An error in the inputs or the tokenizer: printed as `error: ...`."""


# ---------------------------------------------------------------- tokenizers


class ByteTokenizer:
    """A token per byte: vocabulary 256, no special tokens."""

    kind = "bytes"
    path = None
    sha256 = None
    model_class = "bytes"
    vocab_size = 256
    bos_id = None
    eos_id = None
    special_ids = {}

    def encode_batch(self, docs):
        return [np.frombuffer(_as_bytes(d), dtype=np.uint8) for d in docs]

    def decode(self, ids):
        if len(ids) and int(ids.max()) > 255:
            at = int(np.argmax(ids > 255))
            raise DataError(f"token {int(ids[at])} at position {at} is not a byte: "
                            "pass --tokenizer=PATH")
        return ids.astype(np.uint8).tobytes()


def _as_bytes(doc):
    return doc.encode("utf-8") if isinstance(doc, str) else doc


class HFTokenizer:
    """A Hugging Face tokenizer.json, through the `tokenizers` library."""

    kind = "huggingface"

    def __init__(self, spec, eos_token=None):
        path = os.path.join(spec, "tokenizer.json") if os.path.isdir(spec) else spec
        if not os.path.isfile(path):
            raise DataError(f"{spec}: no tokenizer.json there" if os.path.isdir(spec)
                            else f"{spec}: no such tokenizer file")
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise DataError("--tokenizer needs the `tokenizers` package "
                            "(scripts/install-deps.sh installs it)")
        with open(path, "rb") as f:
            raw = f.read()
        try:
            self.tok = Tokenizer.from_str(raw.decode("utf-8"))
            spec_json = json.loads(raw)
        except Exception as e:  # tokenizers raises plain Exceptions
            raise DataError(f"{path}: not a readable tokenizer: {_one_line(e)}")
        self.path = path
        self.sha256 = hashlib.sha256(raw).hexdigest()
        self.model_class = (spec_json.get("model") or {}).get("type") \
            or type(self.tok.model).__name__
        self.vocab_size = self.tok.get_vocab_size(with_added_tokens=True)
        self.special_ids = {t.content: i for i, t in
                            sorted(self.tok.get_added_tokens_decoder().items())
                            if t.special}
        self.bos_id, trailing = self._post_processor_specials()
        self.eos_id = self._find_eos(eos_token, trailing)
        # encode_batch_fast skips the character offsets, which we never use.
        self._encode = getattr(self.tok, "encode_batch_fast", self.tok.encode_batch)

    def _post_processor_specials(self):
        """The special tokens the post-processor puts before and after a
        document: probe it with a one-word text."""
        enc = self.tok.encode("a", add_special_tokens=True)
        mask = enc.special_tokens_mask
        first = enc.ids[0] if enc.ids and mask[0] else None
        last = enc.ids[-1] if len(enc.ids) > 1 and mask[-1] else None
        return first, last

    def _token_id(self, token, where):
        i = self.tok.token_to_id(token)
        if i is None:
            raise DataError(f"{where}: EOS token {token!r} is not in the vocabulary "
                            f"of {self.path}")
        return i

    def _find_eos(self, eos_token, trailing):
        if eos_token is not None:
            return self._token_id(eos_token, "--eos-token")
        directory = os.path.dirname(os.path.abspath(self.path))
        for name, key in (("tokenizer_config.json", "eos_token"),
                          ("generation_config.json", "eos_token_id"),
                          ("config.json", "eos_token_id")):
            found = _config_value(os.path.join(directory, name), key)
            if found is None:
                continue
            where = os.path.join(directory, name)
            if isinstance(found, list):  # generation_config may list several
                found = found[0] if found else None
            if isinstance(found, dict):  # {"content": "</s>", ...}
                found = found.get("content")
            if isinstance(found, str):
                return self._token_id(found, where)
            if isinstance(found, int):
                return found
        if trailing is not None:
            return trailing
        for token in WELL_KNOWN_EOS:
            i = self.tok.token_to_id(token)
            if i is not None:
                return i
        raise DataError(f"{self.path}: cannot tell which token ends a document "
                        "(no eos_token in a config beside it, no trailing special "
                        "token in its post-processor, none of "
                        f"{', '.join(WELL_KNOWN_EOS)}): pass --eos-token=TOKEN")

    def encode_batch(self, docs):
        """Each document's ids as a list, ending with the EOS."""
        encodings = self._encode(docs, add_special_tokens=True)
        eos = self.eos_id
        out = []
        for e in encodings:
            ids = e.ids
            if not ids or ids[-1] != eos:
                ids.append(eos)
            out.append(ids)
        return out

    def decode(self, ids):
        return self.tok.decode(ids.tolist(), skip_special_tokens=False).encode("utf-8")


def _config_value(path, key):
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: not readable JSON: {_one_line(e)}")
    return config.get(key) if isinstance(config, dict) else None


def _one_line(e):
    return " ".join(str(e).split())


def load_tokenizer(spec, eos_token=None):
    if spec == "bytes":
        if eos_token is not None:
            raise DataError("--eos-token needs --tokenizer=PATH (bytes mode adds no "
                            "special tokens)")
        return ByteTokenizer()
    return HFTokenizer(spec, eos_token)


# -------------------------------------------------------------------- inputs


def _kind(path):
    if path.endswith(".jsonl"):
        return "jsonl"
    if path.endswith(".parquet"):
        return "parquet"
    return "text"


def _directory_files(directory):
    found = []
    for root, dirs, files in os.walk(directory):
        found += [os.path.join(root, f) for f in files]
    return sorted(found, key=lambda p: os.path.relpath(p, directory))


def expand_inputs(specs):
    """The input files, in order: globs and directories expanded."""
    files = []
    for spec in specs:
        if glob.has_magic(spec):
            matches = sorted(glob.glob(spec, recursive=True))
            if not matches:
                raise DataError(f"{spec}: matches no file")
        elif not os.path.exists(spec):
            raise DataError(f"{spec}: no such file or directory")
        else:
            matches = [spec]
        for m in matches:
            files += _directory_files(m) if os.path.isdir(m) else [m]
    if not files:
        raise DataError(f"{' '.join(specs)}: no files")
    return files


def count_documents(path, field):
    """The documents of one input, cheaply (the split needs the total before
    tokenizing): 1 for a text file, the non-blank lines of a .jsonl, the rows
    of a .parquet from its metadata."""
    kind = _kind(path)
    try:
        if kind == "text":
            with open(path, "rb"):
                return 1
        if kind == "jsonl":
            with open(path, "rb") as f:
                return sum(1 for line in f if not line.isspace())
        pf = _parquet_file(path)
        if field not in pf.schema_arrow.names:
            raise DataError(f"{path}: no column {field!r} "
                            f"(columns: {', '.join(pf.schema_arrow.names)})")
        return pf.metadata.num_rows
    except OSError as e:
        raise DataError(f"{path}: {e.strerror or _one_line(e)}")


def _parquet_file(path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DataError(f"{path}: .parquet inputs need the `pyarrow` package "
                        "(scripts/install-deps.sh installs it)")
    try:
        return pq.ParquetFile(path)
    except OSError:
        raise
    except Exception as e:
        raise DataError(f"{path}: not a readable parquet file: {_one_line(e)}")


def read_documents(path, field, as_bytes):
    """Yields the documents of one input: str, or bytes for a text file in
    bytes mode (so any bytes round-trip)."""
    kind = _kind(path)
    if kind == "text":
        with open(path, "rb") as f:
            data = f.read()
        if as_bytes:
            yield data
            return
        try:
            yield data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise DataError(f"{path}: byte offset {e.start}: not UTF-8 text")
        return
    if kind == "jsonl":
        with open(path, "rb") as f:
            for number, line in enumerate(f, 1):
                if line.isspace():
                    continue
                yield _jsonl_field(line, field, path, number)
        return
    pf = _parquet_file(path)
    row = 0
    for batch in pf.iter_batches(batch_size=BATCH_DOCUMENTS, columns=[field]):
        for value in batch.column(0).to_pylist():
            if not isinstance(value, str):
                raise DataError(f"{path}: row {row}: {field!r} is "
                                f"{'null' if value is None else type(value).__name__}, "
                                "not a string")
            yield value
            row += 1


def _jsonl_field(line, field, path, number):
    try:
        record = json.loads(line)
    except ValueError as e:
        raise DataError(f"{path}:{number}: not JSON: {_one_line(e)}")
    if not isinstance(record, dict) or field not in record:
        raise DataError(f"{path}:{number}: no field {field!r} (see --text-field)")
    value = record[field]
    if not isinstance(value, str):
        raise DataError(f"{path}:{number}: field {field!r} is "
                        f"{type(value).__name__}, not a string")
    return value


def document_batches(files, field, as_bytes, val_from):
    """Yields (split, documents) batches in input order; a batch never
    straddles the train/val boundary (document index val_from)."""
    index = 0
    batch, size = [], 0
    for path in files:
        for doc in read_documents(path, field, as_bytes):
            if index == val_from and batch:
                yield "train", batch
                batch, size = [], 0
            batch.append(doc)
            size += len(doc)
            index += 1
            if len(batch) >= BATCH_DOCUMENTS or size >= BATCH_BYTES:
                yield ("train" if index <= val_from else "val"), batch
                batch, size = [], 0
    if batch:
        yield ("train" if index <= val_from else "val"), batch


def prefetched(iterator, depth=2):
    """Runs `iterator` in a thread, `depth` items ahead, so reading and
    parsing the next batch overlaps encode_batch (which releases the GIL).
    An exception in the thread is raised here, in order."""
    q = queue.Queue(maxsize=depth)
    stop = threading.Event()
    end = object()

    def produce():
        try:
            for item in iterator:
                while not stop.is_set():
                    try:
                        q.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        pass
                if stop.is_set():
                    return
            q.put((end, None))
        except BaseException as e:  # handed to the consumer
            q.put((end, e))

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    try:
        while True:
            item, error = q.get()
            if error is not None:
                raise error
            if item is end:
                return
            yield item
    finally:
        stop.set()


# ------------------------------------------------------------------- outputs


class Outputs:
    """The files of one run, all written under NAME.tmp until commit()."""

    def __init__(self, prefix, dtype_name, shard_tokens):
        self.prefix = prefix
        self.dtype_name = dtype_name
        self.dtype = np.dtype("<u2" if dtype_name == "uint16" else "<u4")
        self.magic, self.version = MAGIC_OF[dtype_name]
        self.shard_tokens = shard_tokens
        self.shards = {s: [] for s in SPLITS}  # split -> [[tmp path, tokens]]
        self.file = None  # the open shard: (split, file object)
        self.created_dirs = []

    def make_directory(self):
        directory = os.path.dirname(self.prefix)
        missing = []
        while directory and not os.path.isdir(directory):
            missing.append(directory)
            directory = os.path.dirname(directory)
        for d in reversed(missing):
            os.mkdir(d)
            self.created_dirs.append(d)

    def write(self, split, ids):
        """Appends ids (a numpy array of self.dtype) to the split's stream,
        starting a new shard whenever one is full."""
        while len(ids):
            shard = self._open_shard(split)
            room = self.shard_tokens - shard[1]
            part, ids = ids[:room], ids[room:]
            self.file[1].write(part.tobytes())
            shard[1] += len(part)

    def _open_shard(self, split):
        shards = self.shards[split]
        if self.file and self.file[0] == split and shards[-1][1] < self.shard_tokens:
            return shards[-1]
        self._close_file()
        tmp = f"{self.prefix}_{split}_{len(shards):06d}.bin.tmp"
        shards.append([tmp, 0])
        f = open(tmp, "wb")
        self.file = (split, f)
        f.write(b"\0" * HEADER_BYTES)  # the count is known at the end
        return shards[-1]

    def _close_file(self):
        if self.file:
            split, f = self.file
            self.file = None
            f.seek(0)
            f.write(self._header(self.shards[split][-1][1]))
            f.close()

    def _header(self, count):
        header = np.zeros(HEADER_INTS, dtype="<i4")
        header[:3] = (self.magic, self.version, count)
        return header.tobytes()

    def finish_split(self, split):
        """Closes the split's last shard; a split with no tokens still gets
        an (empty) file."""
        if not self.shards[split]:
            self._open_shard(split)
        if self.file and self.file[0] == split:
            self._close_file()

    def final_names(self, split):
        shards = self.shards[split]
        if len(shards) == 1:
            return [f"{self.prefix}_{split}.bin"]
        return [f"{self.prefix}_{split}_{i:06d}.bin" for i in range(len(shards))]

    def commit(self, sidecar):
        """Renames the finished files into place, removes a previous run's
        files of this prefix that this run does not replace, and writes the
        sidecar last."""
        sidecar_path = self.prefix + ".json"
        if os.path.exists(sidecar_path):
            os.remove(sidecar_path)  # no sidecar while the set is mixed
        final = {s: self.final_names(s) for s in SPLITS}
        keep = {os.path.abspath(p) for s in SPLITS for p in final[s]}
        for stale in self._existing_token_files():
            if os.path.abspath(stale) not in keep:
                os.remove(stale)
        for s in SPLITS:
            for (tmp, _), name in zip(self.shards[s], final[s]):
                os.replace(tmp, name)
        self.shards = {s: [] for s in SPLITS}
        tmp = sidecar_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(sidecar, f, indent=1)
            f.write("\n")
        os.replace(tmp, sidecar_path)

    def _existing_token_files(self):
        base = os.path.basename(self.prefix)
        pattern = re.compile(re.escape(base) + r"_(train|val)(_[0-9]+)?\.bin$")
        return [p for p in glob.glob(glob.escape(self.prefix) + "_*.bin")
                if pattern.match(os.path.basename(p))]

    def abandon(self):
        """Removes everything this run wrote (after an error)."""
        if self.file:
            self.file[1].close()
            self.file = None
        for s in SPLITS:
            for tmp, _ in self.shards[s]:
                if os.path.exists(tmp):
                    os.remove(tmp)
        for tmp in (self.prefix + ".json.tmp",):
            if os.path.exists(tmp):
                os.remove(tmp)
        for d in reversed(self.created_dirs):
            try:
                os.rmdir(d)
            except OSError:
                pass


# ---------------------------------------------------------------- the run


class Progress:
    """Documents on a tqdm bar, tokens and tokens/s beside it (stderr)."""

    def __init__(self, total, quiet):
        self.bar = None
        self.tokens = 0
        self.start = time.monotonic()
        if not quiet and sys.stderr.isatty():
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, unit="doc", file=sys.stderr,
                                dynamic_ncols=True)
            except ImportError:
                pass

    def update(self, documents, tokens):
        self.tokens += tokens
        if self.bar:
            rate = self.tokens / max(time.monotonic() - self.start, 1e-9)
            self.bar.set_postfix_str(f"{self.tokens:,} tokens, {rate:,.0f} tokens/s",
                                     refresh=False)
            self.bar.update(documents)

    def close(self):
        if self.bar:
            self.bar.close()


def split_point(documents, fraction):
    """The index of the first val document: the last round(f*D), at least
    one, and at least one document left for train."""
    n_val = min(max(1, round(fraction * documents)), documents - 1)
    return documents - n_val


def tokenize(args, tokenizer, files, documents, outputs):
    """Streams the documents through the tokenizer into `outputs`; returns
    the documents of each split."""
    as_bytes = tokenizer.kind == "bytes"
    dtype = outputs.dtype
    progress = Progress(documents, args.quiet)
    try:
        if documents == 1:
            # One document (the demo's text file): split its tokens.
            doc = next(read_documents(files[0], args.text_field, as_bytes))
            ids = np.asarray(tokenizer.encode_batch([doc])[0], dtype=dtype)
            cut = int(len(ids) * (1 - args.val_fraction))
            outputs.write("train", ids[:cut])
            outputs.finish_split("train")
            outputs.write("val", ids[cut:])
            progress.update(1, len(ids))
            return {"train": 1, "val": 1}
        val_from = split_point(documents, args.val_fraction)
        counts = {"train": 0, "val": 0}
        batches = prefetched(document_batches(files, args.text_field, as_bytes, val_from))
        for split, docs in batches:
            if split == "val" and counts["val"] == 0:
                outputs.finish_split("train")
            encoded = tokenizer.encode_batch(docs)
            # One array and one write a batch: per-document writes would cost
            # more than the tokenizing.
            if as_bytes:
                ids = np.concatenate(encoded).astype(dtype) if encoded else np.empty(0, dtype)
            else:
                flat = []
                for e in encoded:
                    flat += e
                ids = np.array(flat, dtype=dtype)
            outputs.write(split, ids)
            counts[split] += len(docs)
            progress.update(len(docs), len(ids))
        return counts
    finally:
        progress.close()


def sidecar(tokenizer, outputs, counts):
    splits = {}
    for s in SPLITS:
        files = [{"name": os.path.basename(name), "tokens": tokens}
                 for name, (_, tokens) in zip(outputs.final_names(s), outputs.shards[s])]
        splits[s] = {"documents": counts[s],
                     "tokens": sum(f["tokens"] for f in files),
                     "files": files}
    return {
        "format": "zero-opt-tokens",
        "version": 1,
        "dtype": outputs.dtype_name,
        "tokenizer": {
            "kind": tokenizer.kind,
            "path": os.path.abspath(tokenizer.path) if tokenizer.path else None,
            "sha256": tokenizer.sha256,
            "class": tokenizer.model_class,
            "vocab_size": tokenizer.vocab_size,
            "bos_id": tokenizer.bos_id,
            "eos_id": tokenizer.eos_id,
            "special_ids": tokenizer.special_ids,
        },
        "splits": splits,
    }


def prepare(args):
    tokenizer = load_tokenizer(args.tokenizer, args.eos_token)
    files = expand_inputs(args.inputs)
    documents = sum(count_documents(f, args.text_field) for f in files)
    if documents == 0:
        raise DataError(f"{' '.join(args.inputs)}: no documents")
    dtype_name = "uint16" if tokenizer.vocab_size <= 65536 else "uint32"
    outputs = Outputs(args.output, dtype_name, args.shard_tokens)
    try:
        outputs.make_directory()
        counts = tokenize(args, tokenizer, files, documents, outputs)
        for s in SPLITS:
            outputs.finish_split(s)
        meta = sidecar(tokenizer, outputs, counts)
        outputs.commit(meta)
    except BaseException:
        outputs.abandon()
        raise
    if tokenizer.kind == "bytes":
        what = "vocabulary 256, bytes"
    else:
        what = f"vocabulary {tokenizer.vocab_size}, {tokenizer.model_class}, {dtype_name}"
    for s in SPLITS:
        for f in meta["splits"][s]["files"]:
            name = os.path.join(os.path.dirname(args.output), f["name"])
            print(f"{name}: {f['tokens']} tokens ({what})")
    if documents == 1:
        print(f"{args.output}.json: 1 document, split by its tokens, {dtype_name}")
    else:
        print(f"{args.output}.json: {documents} documents "
              f"(train {counts['train']}, val {counts['val']}), {dtype_name}")


# ------------------------------------------------------------------ decoding


def read_token_file(path):
    """A token file's ids (a read-only numpy array over the file), checked
    against its header."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            header = f.read(HEADER_BYTES)
    except OSError as e:
        raise DataError(f"{path}: {e.strerror or _one_line(e)}")
    if len(header) < HEADER_BYTES:
        raise DataError(f"{path}: {len(header)} bytes, shorter than the "
                        f"{HEADER_BYTES}-byte header")
    magic, version, count = np.frombuffer(header, dtype="<i4", count=3).tolist()
    if magic not in (m for m, _ in FORMATS):
        raise DataError(f"{path}: wrong magic {magic} (a token file has 20240520 or "
                        "20240801)")
    if (magic, version) not in FORMATS:
        expected = next(v for m, v in FORMATS if m == magic)
        raise DataError(f"{path}: magic {magic} with version {version} (expected "
                        f"{expected})")
    dtype = FORMATS[(magic, version)]
    if count < 0 or HEADER_BYTES + count * dtype.itemsize > size:
        raise DataError(f"{path}: truncated: the header counts {count} tokens "
                        f"({HEADER_BYTES + count * dtype.itemsize} bytes), the file "
                        f"has {size} bytes")
    if count == 0:
        return np.empty(0, dtype)
    return np.memmap(path, dtype=dtype, mode="r", offset=HEADER_BYTES, shape=(count,))


def decode(args):
    ids = read_token_file(args.decode)
    tokenizer = load_tokenizer(args.tokenizer)
    try:
        text = tokenizer.decode(ids)
    except DataError as e:
        raise DataError(f"{args.decode}: {e}")
    sys.stdout.buffer.write(text)
    sys.stdout.buffer.flush()


def positive_int(text):
    value = int(text.replace("_", ""))
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="See the module docstring (scripts/prepare_data.py) for the formats.")
    parser.add_argument("inputs", nargs="*",
                        help="text, .jsonl or .parquet files, directories, globs")
    parser.add_argument("-o", "--output", metavar="PREFIX",
                        help="output prefix: PREFIX_train.bin, PREFIX_val.bin, PREFIX.json")
    parser.add_argument("--tokenizer", default="bytes", metavar="PATH|bytes",
                        help="a tokenizer.json or a model directory holding one "
                             "(default: bytes, a token per byte)")
    parser.add_argument("--eos-token", metavar="TOKEN",
                        help="the token that ends a document (default: from the "
                             "model's configs or the tokenizer)")
    parser.add_argument("--text-field", default="text", metavar="NAME",
                        help="the field of .jsonl/.parquet records holding the text "
                             "(default: text)")
    parser.add_argument("--val-fraction", type=float, default=0.1, metavar="F",
                        help="share of the documents (of the tokens, for one "
                             "document) for val (default 0.1)")
    parser.add_argument("--shard-tokens", type=positive_int, default=100_000_000,
                        metavar="N", help="tokens per file (default 100_000_000)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--decode", metavar="FILE.bin",
                        help="print a token file back as text (with --tokenizer)")
    args = parser.parse_args()

    try:
        if args.decode:
            if args.inputs or args.output:
                parser.error("--decode takes no inputs and no --output")
            decode(args)
            return
        if not args.inputs:
            parser.error("no inputs")
        if not args.output:
            parser.error("-o/--output is required")
        if not 0 < args.val_fraction < 1:
            parser.error("--val-fraction must be between 0 and 1")
        prepare(args)
    except DataError as e:
        sys.stdout.flush()
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()

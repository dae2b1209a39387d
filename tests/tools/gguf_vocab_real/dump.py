"""A GGUF file's tokenizer arrays as JSON (what ids.c reads): dump.py LCPP FILE.gguf OUT.json,
with LCPP a llama.cpp checkout (its gguf-py reads the file; needs numpy)."""
import json
import sys
sys.path.insert(0, sys.argv.pop(1) + '/gguf-py')
from gguf import GGUFReader
r = GGUFReader(sys.argv[1])
def val(k, d=None):
    f = r.fields.get(k)
    if f is None: return d
    return f.contents()
out = {"model": val("tokenizer.ggml.model"), "pre": val("tokenizer.ggml.pre"), "name": val("general.name"),
       "tokens": val("tokenizer.ggml.tokens"), "scores": val("tokenizer.ggml.scores"),
       "types": val("tokenizer.ggml.token_type"), "merges": val("tokenizer.ggml.merges"),
       "bos": val("tokenizer.ggml.bos_token_id", -1), "eos": val("tokenizer.ggml.eos_token_id", -1),
       "unk": val("tokenizer.ggml.unknown_token_id", -1), "pad": val("tokenizer.ggml.padding_token_id", -1)}
for k in ("add_bos_token", "add_eos_token", "add_space_prefix"):
    v = val("tokenizer.ggml." + k)
    out[k.replace("_token", "")] = -1 if v is None else int(v)
json.dump(out, open(sys.argv[2], "w"), ensure_ascii=False)
print(sys.argv[1], out["model"], out["pre"], len(out["tokens"]), out["add_bos"], out["bos"], out["name"])

"""A vocabulary GGUF file of dump.py's arrays with another tokenizer.ggml.pre ("-": none):
rewrite.py IN (IN.json) PRE OUT (writes OUT.gguf, OUT.json)."""
import json
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from gguf_writer import GGUFWriter, Arr, STRING, INT32, UINT32  # noqa: E402
src, pre, out = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(src + '.json'))
d['pre'] = None if pre == '-' else pre
w = GGUFWriter()
w.add('general.architecture', 'gpt2')
for k, v in (("context_length", 64), ("embedding_length", 8), ("block_count", 1), ("feed_forward_length", 16), ("attention.head_count", 1)):
    w.add('gpt2.' + k, v, UINT32)
w.add('gpt2.attention.layer_norm_epsilon', 1e-5)
w.add('tokenizer.ggml.model', d['model'])
if d['pre']: w.add('tokenizer.ggml.pre', d['pre'])
w.add('tokenizer.ggml.tokens', Arr(STRING, d['tokens']))
w.add('tokenizer.ggml.token_type', Arr(INT32, d['types']))
w.add('tokenizer.ggml.merges', Arr(STRING, d['merges']))
for k in ('bos', 'eos'):
    if d[k] >= 0: w.add('tokenizer.ggml.%s_token_id' % k, d[k], UINT32)
w.write(out + '.gguf')
json.dump(d, open(out + '.json', 'w'), ensure_ascii=False)

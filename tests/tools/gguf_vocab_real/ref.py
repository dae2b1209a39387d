#!/usr/bin/python3
"""llama.cpp's ids and text for texts (as ids.c writes gguf_vocab.c's), through
the npm package's libllama (tests/fixtures/gguf_vocab/make_expected.py's
calls): NLC=<its npm folder> ref.py FILE.gguf TEXTS OUT.tsv"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "fixtures", "gguf_vocab"))
import make_expected as m  # noqa: E402

params = m.L.llama_model_default_params()
params.vocab_only = True
model = m.L.llama_model_load_from_file(sys.argv[1].encode(), params)
assert model, sys.argv[1]
vocab = m.L.llama_model_get_vocab(model)
with open(sys.argv[3], "w") as out:
    for line in open(sys.argv[2]):
        line = line.strip()
        if not line:
            continue
        ids = m.tokenize(vocab, bytes.fromhex(line[1:]))
        out.write("%s\t%s\t%s\n" % (" ".join(map(str, ids)), m.detokenize(vocab, ids, True).hex(),
                                    m.detokenize(vocab, ids, False).hex()))
m.L.llama_model_free(model)

"""The texts run.sh compares on, one a line ("x" + hex): tests/fixtures/hftok's and
gguf_vocab's cases, llama.cpp's own vocabulary tests (models/*.inp) and 600 random
mixes of letters, digits, punctuation, scripts, marks, white space, emoji and special
tokens' texts, 200 of them with bytes that are not UTF-8 (seeded). texts.py LCPP OUT."""
import glob
import random
import sys
texts = []
for f in ['tests/fixtures/hftok/cases.tsv', 'tests/fixtures/gguf_vocab/cases.tsv']:
    for l in open(f):
        if l.startswith('#') or not l.strip(): continue
        p = l.rstrip('\n').split('\t')
        texts.append(bytes.fromhex(p[1] if len(p) > 1 else '').decode('utf-8', 'replace'))
for f in sorted(glob.glob(sys.argv[1] + '/models/*.inp')):
    texts += open(f, encoding='utf-8').read().split('\n__ggml_vocab_test__\n')
rng = random.Random(1234)
pools = [
 "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", " ", "  ", "\n", "\t", "\r\n",
 "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", "'s'S'll'LL're've'M'd't",
 "éüñçßøåæœÀÉÎÕÜ", "你好世界中文字符測試", "日本語のテキストカタカナ", "한국어텍스트", "Ελληνικάαβγ", "Русскийтекст",
 "٠١٢٣٤٥٦٧٨٩", "²³¹½¼⅓Ⅷⅸ", "😀😃👍🏽👨‍👩‍👧❤️✨🦙", "\u0301\u0308\u0304\u0327", "\u200b\u200d\ufeff\u00a0\u3000\u2009\u2028\u0085",
 "\u0e01\u0e32\u0e23\u0e17\u0e14\u0e2a\u0e2d\u0e1a", "\u05d0\u05d1\u05d2\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
 "▁", "<s>", "</s>", "<unk>", "<|endoftext|>", "<|begin_of_text|>", "<|eot_id|>", "<|im_start|>", "<|im_end|>", "<|user|>", "<|end|>", "<0x41>",
 "\U000e0080\U0010fffd\U00011f04\U0001e4d0",
]
for n in range(600):
    k = rng.randint(1, 40)
    s = ''.join(rng.choice(rng.choice(pools)) if rng.random() < 0.7 else rng.choice(pools) for _ in range(k))
    texts.append(s)
raw = [t.encode('utf-8') for t in texts]
# invalid bytes (no 0xF0-0xF7 lead: one past U+10FFFF makes llama.cpp's BPE throw)
bad = [b'\x80', b'\xbf', b'\xc0', b'\xc3', b'\xe2', b'\xe2\x82', b'\xed\xa0\x80', b'\xff', b'\xfe']
for t in texts[-200:]:
    b = bytearray(t.encode('utf-8'))
    if 0xF4 in b:  # a byte put after 0xF4 may make one past U+10FFFF too
        continue
    for _ in range(rng.randint(1, 4)):
        p = rng.randint(0, len(b))
        b[p:p] = rng.choice(bad)
    raw.append(bytes(b))
with open(sys.argv[2], 'w') as f:
    for b in raw:
        f.write('x' + b.hex() + '\n')
print(len(texts))

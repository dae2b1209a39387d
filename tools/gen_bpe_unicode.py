#!/usr/bin/python3
"""src/core/bpe_unicode_tab.inc: where Hugging Face's tokenizers (the npm
package, 0.23.x, the reference of tests/test_bpe_hf.c) classify and
normalize characters unlike the tables attnviz links with. Run by
developers, not by `make`:

  NODE_PATH=<folder with the tokenizers npm package>/node_modules \\
      /usr/bin/python3 tools/gen_bpe_unicode.py

Needs Debian's python3 (its unicodedata is Unicode 14.0, as Debian's PCRE2
10.42) and node (its ICU's Unicode, 17.0 with node 20.20, only proposes
candidates: every answer is the reference's). What it found for 0.23.2:

- categories: the reference's regexes (Oniguruma) know Unicode 16.0; PCRE2
  10.42 knows 14.0 and utf8proc 2.8 15.0. The table lists each code point
  whose general category the reference gives unlike Unicode 14.0, with both
  categories, so the split patterns add (or take out) those characters and
  bpe_ucat answers as the reference for PCRE2's and utf8proc's gaps alike.
- Oniguruma's \\w beyond [\\p{L}\\p{M}\\p{Nd}\\p{Pc}] (Other_Alphabetic
  symbols, Nl, ZWNJ/ZWJ): asked of the reference directly.
- normalization: the reference's NFC/NFD/NFKC/NFKD tables
  (unicode-normalization-alignments) are older (no combining class for
  marks of Unicode 10 and later, no composition of Unicode 13's Dives Akuru
  or 16's Kirat Rai pairs). Every code point whose decomposition, combining
  class or composition the reference lacks is listed: the reference treats
  it as a plain starter, so attnviz normalizes the text between two such
  characters with utf8proc and copies them as they are.
"""
import json
import os
import subprocess
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "src", "core", "bpe_unicode_tab.inc")
CATS = ("Lu Ll Lt Lm Lo Mn Mc Me Nd Nl No Pc Pd Ps Pe Pi Pf Po Sm Sc Sk So "
        "Zs Zl Zp Cc Cf Cs Co Cn").split()  # utf8proc_category_t's order, from 1; Cn is 0


def cat_value(c):
    return 0 if c == "Cn" else CATS.index(c) + 1

PROBE = r"""
const tk = require('tokenizers');
const cps = [];
for (let c = 0; c < 0x110000; c++) if (c < 0xD800 || c >= 0xE000) cps.push(c);
function tokFor(re) {
  return tk.Tokenizer.fromString(JSON.stringify({
    version: '1.0', truncation: null, padding: null, added_tokens: [],
    normalizer: {type: 'Replace', pattern: {Regex: re}, content: '\u0001'},
    pre_tokenizer: {type: 'Split', pattern: {Regex: '(?m:.)'}, behavior: 'Isolated',
                    invert: false},
    post_processor: null, decoder: null,
    model: {type: 'WordLevel', vocab: {'[UNK]': 0, '\u0001': 1}, unk_token: '[UNK]'}}));
}
// the code points (U+0001 aside: the mark) the reference's regex re matches
async function matching(re) {
  const t = tokFor(re), out = [];
  for (let i = 0; i < cps.length; i += 0x10000) {
    const part = cps.slice(i, i + 0x10000).filter((c) => c !== 1);
    const ids = (await t.encode(String.fromCodePoint(...part), null,
                                {addSpecialTokens: false})).getIds();
    if (ids.length !== part.length) throw new Error('pieces ' + re);
    part.forEach((c, k) => { if (ids[k] === 1) out.push(c); });
  }
  return out;
}
// lines through the reference's normalizer and ICU's, the lines that differ
function differs(lines, ref, form) {
  const got = ref.normalizeString(lines.join('\n')).split('\n');
  if (got.length !== lines.length) throw new Error('lines ' + form);
  return lines.map((l, i) => got[i] !== l.normalize(form));
}
async function main() {
  const cats = process.argv.slice(1);
  const res = {cat: {}, word: await matching('\\w')};
  for (const c of cats) res.cat[c] = await matching('\\p{' + c + '}');
  const nfc = tk.nfcNormalizer(), nfd = tk.nfdNormalizer(), nfkd = tk.nfkdNormalizer();
  const barrier = new Set();
  const ch = cps.map((c) => String.fromCodePoint(c));
  // decompositions, and combining classes (a class > 1 moves before U+0334's 1,
  // a class < 240 after U+0345's 240)
  for (const [form, ref, f] of [['NFD', nfd, (s) => s], ['NFKD', nfkd, (s) => s],
                                ['NFD', nfd, (s) => 'a' + s + '\u0334'],
                                ['NFD', nfd, (s) => 'a\u0345' + s]]) {
    const lines = ch.map((s) => f(s).replace('\n', ' '));
    differs(lines, ref, form).forEach((d, i) => { if (d) barrier.add(cps[i]); });
  }
  // compositions: each primary composite from its decomposition
  const comp = [];
  for (const s of ch) {
    const d = s.normalize('NFD');
    if (d !== s && d.normalize('NFC') === s) comp.push([s, d]);
  }
  const bad = differs(comp.map((p) => p[1]), nfc, 'NFC');
  // a part of an unknown composition is a barrier unless the reference
  // composes it elsewhere or knows it as a mark (U+0307 in U+105C9's)
  const known = new Set();
  comp.forEach(([s, d], i) => { if (!bad[i]) for (const x of d) known.add(x.codePointAt(0)); });
  const mark = (x) => ('a' + x + '\u0334').normalize('NFD') !== 'a' + x + '\u0334' ||
                      ('a\u0345' + x).normalize('NFD') !== 'a\u0345' + x;
  res.pairs = [];
  comp.forEach(([s, d], i) => {
    if (!bad[i]) return;
    const parts = [...d].map((x) => x.codePointAt(0));
    res.pairs.push([s.codePointAt(0), ...parts]);
    barrier.add(s.codePointAt(0));
    for (const x of parts)
      if (!known.has(x) && (!mark(String.fromCodePoint(x)) || barrier.has(x))) barrier.add(x);
  });
  res.barrier = [...barrier].sort((a, b) => a - b);
  process.stdout.write(JSON.stringify(res));
}
main();
"""


def ranges(cps):
    out = []
    for c in sorted(cps):
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return out


def main():
    if unicodedata.unidata_version != "14.0.0":
        sys.exit("needs Unicode 14.0's unicodedata (Debian 12's /usr/bin/python3), as PCRE2 10.42")
    probe = subprocess.run(["node", "-e", PROBE, "--"] + [c for c in CATS if c != "Cs"],
                           capture_output=True, check=True, env=dict(os.environ))
    res = json.loads(probe.stdout)
    ref = {}
    for c, lst in res["cat"].items():
        for cp in lst:
            ref[cp] = c
    ref[1] = "Cc"
    fix = []  # (cp, reference's category, Unicode 14's)
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        old = unicodedata.category(chr(cp))
        if ref.get(cp) is None:
            sys.exit("U+%04X: no category from the reference" % cp)
        if ref[cp] != old:
            fix.append((cp, ref[cp], old))
    rows = []
    for cp, new, old in fix:
        if rows and rows[-1][1] == cp - 1 and rows[-1][2:] == [new, old]:
            rows[-1][1] = cp
        else:
            rows.append([cp, cp, new, old])
    word = set(res["word"])
    base = {cp for cp, c in ref.items() if c[0] in "LM" or c in ("Nd", "Pc")}
    if base - word:
        sys.exit("\\w lacks some of [\\p{L}\\p{M}\\p{Nd}\\p{Pc}]: %r" % sorted(base - word)[:10])
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("/* Generated by tools/gen_bpe_unicode.py from Hugging Face's tokenizers\n"
                " * (npm) and Python's unicodedata 14.0: do not edit. Included by\n"
                " * bpe_unicode.c. Categories are utf8proc_category_t's values. */\n\n")
        f.write("/* The reference's general category where it is not Unicode 14.0's:\n"
                " * first, last, the reference's, Unicode 14.0's (PCRE2 10.42's). */\n")
        f.write("static const BpeCatFix cat_fix[] = {\n")
        for lo, hi, new, old in rows:
            f.write("    {0x%04X, 0x%04X, %d, %d}, /* %s, was %s */\n"
                    % (lo, hi, cat_value(new), cat_value(old), new, old))
        f.write("};\n\n")
        f.write("/* Oniguruma's \\w beyond letters, marks, Nd and Pc (the reference's). */\n")
        f.write("static const BpeRange word_extra[] = {\n")
        for lo, hi in ranges(word - base):
            f.write("    {0x%04X, 0x%04X},\n" % (lo, hi))
        f.write("};\n\n")
        f.write("/* Characters the reference's normalizer knows nothing of (no\n"
                " * decomposition, combining class 0, no composition) where Unicode 17\n"
                " * has some; its unknown compositions were:\n")
        for p in res["pairs"]:
            f.write(" *   U+%04X = %s\n" % (p[0], " + ".join("U+%04X" % c for c in p[1:])))
        f.write(" */\nstatic const BpeRange norm_barrier[] = {\n")
        for lo, hi in ranges(res["barrier"]):
            f.write("    {0x%04X, 0x%04X},\n" % (lo, hi))
        f.write("};\n")
    print("%d category ranges, %d \\w ranges, %d normalization ranges (%d code points)"
          % (len(rows), len(ranges(word - base)), len(ranges(res["barrier"])),
             len(res["barrier"])))


if __name__ == "__main__":
    main()

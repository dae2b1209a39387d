// A large tokenizer.json for the timed reads of one (single_test.mjs, and
// by node for a native measure): n tokens, GPT-2's byte-level alphabet and
// tokens joined from two earlier ones, each with its merge and many with a
// second merge (another split of the same token), written as Hugging Face
// writes the file (indent 2, merges as [left, right]); the last token is
// <|endoftext|>, an added token. n = 262144 (Gemma 3's count) gives about
// 30 MB. The same function runs in node and in the page (its text passed
// in, as deepen.mjs's), so both read the same file.
export function bigTokenizer(n) {
  let seed = 12345;
  const rand = k => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) % k; };
  const alphabet = [];
  for (let b = 0, m = 0; b < 256; b++)
    alphabet.push(String.fromCodePoint((b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174 ? b : 256 + m++));
  const tokens = alphabet.slice(), ids = new Map(tokens.map((t, i) => [t, i])), merges = [];
  while (tokens.length < n - 1) {
    const l = tokens[rand(tokens.length)], r = tokens[rand(Math.min(tokens.length, 2048))];
    const j = l + r;
    if (j.length > 16 || ids.has(j)) continue;
    ids.set(j, tokens.length);
    tokens.push(j);
    merges.push([l, r]);
  }
  for (let i = 256; i < tokens.length && merges.length < 2 * n; i++) { // a second split where both parts are tokens
    const cs = [...tokens[i]];
    for (let k = 1; k < cs.length; k++) {
      const l = cs.slice(0, k).join(''), r = cs.slice(k).join('');
      if (ids.has(l) && ids.has(r) && l !== merges[i - 256][0]) { merges.push([l, r]); break; }
    }
  }
  const eot = '<|endoftext|>';
  const vocab = {};
  tokens.forEach((t, i) => { vocab[t] = i; });
  vocab[eot] = n - 1;
  const byteLevel = {type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true};
  return JSON.stringify({
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{id: n - 1, content: eot, single_word: false, lstrip: false, rstrip: false, normalized: false,
                    special: true}],
    normalizer: null, pre_tokenizer: byteLevel, post_processor: null, decoder: byteLevel,
    model: {type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null,
            fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges},
  }, null, 2);
}

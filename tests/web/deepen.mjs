// shakespeare-tiny made depth layers deep, for the pages' timed opens
// (page_test.mjs, single_test.mjs): its safetensors (st, bytes) with block l
// a copy of its block l mod its depth, and its config (text) saying so. The
// same function makes the native folder (node) and the page's (its memory
// file system), so both open the same model.
export function deepen(st, config, depth) {
  const dv = new DataView(st.buffer, st.byteOffset, st.byteLength);
  const n = Number(dv.getBigUint64(0, true));
  const head = JSON.parse(new TextDecoder().decode(st.subarray(8, 8 + n)));
  const data = st.subarray(8 + n);
  const cfg = JSON.parse(config);
  const out = {}, parts = [];
  let at = 0;
  const put = (name, src) => {
    const [a, b] = head[src].data_offsets;
    out[name] = {dtype: head[src].dtype, shape: head[src].shape, data_offsets: [at, at + b - a]};
    parts.push(data.subarray(a, b));
    at += b - a;
  };
  for (const name of Object.keys(head).filter(k => k !== '__metadata__' && !/^h\./.test(k)))
    put(name, name);
  for (let l = 0; l < depth; l++)
    for (const name of Object.keys(head).filter(k => k.startsWith(`h.${l % cfg.n_layer}.`)))
      put(`h.${l}.${name.slice(`h.${l % cfg.n_layer}.`.length)}`, name);
  let text = JSON.stringify({__metadata__: {format: 'pt'}, ...out});
  text += ' '.repeat((8 - text.length % 8) % 8);
  const hb = new TextEncoder().encode(text);
  const res = new Uint8Array(8 + hb.length + at);
  new DataView(res.buffer).setBigUint64(0, BigInt(hb.length), true);
  res.set(hb, 8);
  let o = 8 + hb.length;
  for (const p of parts) { res.set(p, o); o += p.length; }
  return {st: res, config: JSON.stringify({...cfg, n_layer: depth}, null, 1)};
}

// The same in a page: shakespeare-tiny's files in the page's memory
// (/attnviz/models) made depth layers deep, left in the page as
// window.deepFolder ([path under "deep/", bytes]) and, given dst (a folder
// path ending in "/"), written there too.
export function deepenInPage(page, depth, dst = null) {
  return page.evaluate((deepenSrc, depth, dst) => {
    const deepenIn = new Function(`return (${deepenSrc})`)();
    const src = '/attnviz/models/shakespeare-tiny/';
    const d = deepenIn(FS.readFile(src + 'model.safetensors'), FS.readFile(src + 'config.json', {encoding: 'utf8'}), depth);
    const files = [['model.safetensors', d.st], ['config.json', d.config],
                   ['vocab.json', FS.readFile(src + 'vocab.json')], ['merges.txt', FS.readFile(src + 'merges.txt')]];
    if (dst) {
      FS.mkdirTree(dst);
      for (const [f, b] of files) FS.writeFile(dst + f, b);
    }
    window.deepFolder = files.map(([f, b]) => ['deep/' + f, b]);
  }, deepen.toString(), depth, dst);
}

// llama.cpp's ids and text for texts (as ids.c writes gguf_vocab.c's), through
// node-llama-cpp: NLC=<its npm folder> node ref.mjs FILE.gguf TEXTS OUT.tsv
import fs from 'node:fs';
import { pathToFileURL } from 'node:url';
const { getLlama } = await import(pathToFileURL((process.env.NLC || '/tmp/nlc-tok') + '/node_modules/node-llama-cpp/dist/index.js').href);
const llama = await getLlama({ gpu: false, build: 'never', usePrebuiltBinaries: true, maxThreads: 2, logLevel: 'error' });
const model = await llama.loadModel({ modelPath: process.argv[2], gpuLayers: 0, vocabOnly: true });
const bos = model.tokens.shouldPrependBosToken ? [model.tokens.bos] : [];
const eos = model.tokens.shouldAppendEosToken ? [model.tokens.eos] : [];
const out = [];
for (const line of fs.readFileSync(process.argv[3], 'utf8').split('\n')) {
  if (!line) continue;
  const text = new TextDecoder().decode(Buffer.from(line.slice(1), 'hex'));
  const ids = [...bos, ...Array.from(model._model.tokenize(text, true)), ...eos];
  const u = Uint32Array.from(ids);
  out.push([ids.join(' '), Buffer.from(model._model.detokenize(u, true)).toString('hex'), Buffer.from(model._model.detokenize(u, false)).toString('hex')].join('\t'));
}
fs.writeFileSync(process.argv[4], out.join('\n') + '\n');
await model.dispose();

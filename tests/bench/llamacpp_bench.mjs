// llama.cpp beside gguf_bench in make bench (issue 35): the same GGUF file,
// the same two threads, the same ids ((7919 i + 13) mod V), its own CPU
// build from the npm registry (node-llama-cpp's prebuilt libraries):
//   pp256_ms    prompt processing of 256 tokens (the history cleared first);
//   tg64_ms     the keystroke: the last of 64 tokens taken out of the cache
//               and one token decoded at position 63, the next token picked
//               from its logits in llama.cpp's own sampler (asking for the
//               probabilities would add node's sorting of 128k entries).
// Both end in the next token chosen there, as attnviz's key64_top_ms ends
// in its top 10.
// Medians of reps. Usage: node llamacpp_bench.mjs NLC_PREFIX FILE.gguf [reps]
import path from "node:path";
import {pathToFileURL} from "node:url";

const [prefix, modelPath, repsArg] = process.argv.slice(2);
const reps = Math.max(1, Math.min(64, Number(repsArg ?? 5)));
const entry = path.join(prefix, "node_modules", "node-llama-cpp", "dist", "index.js");
const {getLlama} = await import(pathToFileURL(entry).href);
const llama = await getLlama({gpu: false, build: "never", usePrebuiltBinaries: true,
                              maxThreads: 2, logLevel: "error"});
const model = await llama.loadModel({modelPath, gpuLayers: 0});
const V = model.tokens.length ?? 128256;
const ids = Array.from({length: 256}, (_, i) => (7919 * i + 13) % V);
const context = await model.createContext({contextSize: 512, batchSize: 256, threads: 2});
const seq = context.getSequence();
const now = () => Number(process.hrtime.bigint()) / 1e6;
const median = (t) => { t.sort((a, b) => a - b); const n = t.length;
                        return n % 2 ? t[(n - 1) / 2] : (t[n / 2 - 1] + t[n / 2]) / 2; };
const last = (toks) => toks.map((t, i) => i === toks.length - 1 ? [t, {generateNext: {token: true}}] : t);

await seq.controlledEvaluate(last(ids)); // warm
let t = [];
for (let r = 0; r < reps; r++) {
    await seq.clearHistory();
    const a = now();
    await seq.controlledEvaluate(last(ids));
    t.push(now() - a);
}
const pp = median(t);

await seq.clearHistory();
await seq.controlledEvaluate(ids.slice(0, 63));
t = [];
for (let r = 0; r < reps; r++) {
    if (seq.nextTokenIndex > 63)
        await seq.eraseContextTokenRanges([{start: 63, end: seq.nextTokenIndex}]);
    const a = now();
    await seq.controlledEvaluate(last([ids[r % 2 ? 63 : 62]]));
    t.push(now() - a);
}
const tg = median(t);
console.log(`llamacpp pp256_ms=${pp.toFixed(3)} tg64_ms=${tg.toFixed(3)} threads=2`);
await context.dispose();
await model.dispose();
await llama.dispose();

// The window's frame and keys in the page (make web-bench), beside the
// native program's (tests/web/native_bench, run first: its medians and the
// heatmap cells it pointed at are printed with the page's). build/web
// served on 127.0.0.1, loaded by headless Chromium at 1280×800 (WebGL
// through SwiftShader, as on a machine without a GPU: on the same CPU the
// native side uses). The page's steps are timed by the page itself
// (platform_web.c's step adds [start, had events, events ms, frame ms,
// draws] to Module.attnvizTimes; WebGL's draw calls counted here, so a
// step that drew can be told):
//   frame     the pointer moved between two heatmap cells: the step that
//             took the motion and drew (its events and frame);
//   toy_key   "x" typed into the sentence bar, then Backspace: the steps
//             the key's events came in (its forward and frame);
//   nano_key  a nano-sort session dropped on the page, "A" typed, then
//             Backspace: from the start of the step that took the key to
//             the end of the last frame the key caused (the worker's maps),
//             the browser's wait for its next animation frame included;
//             busy: the main thread's time in those steps.
//
// usage (from the clone): node tests/web/page_bench.mjs NATIVE_BENCH SESSION_DIR [N]
//   NATIVE_BENCH: tests/web/native_bench's binary; SESSION_DIR: where the
//   nano-sort session files are written
import {spawn, execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const NATIVE = path.resolve(process.argv[2] || 'build/web-test/native_bench');
const DIR = path.resolve(process.argv[3] || 'build/web-test/bench');
const N = +(process.argv[4] || 40);
const MODULES = path.resolve(process.env.ATTNVIZ_PUPPETEER || 'build/web-test/node_modules');
const {default: puppeteer} = await import(path.join(MODULES, 'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'));
const TIMEOUT = 60000;

const med = v => { const s = [...v].sort((a, b) => a - b); return s[s.length >> 1]; };
const session = m => JSON.stringify({attention_file: m, layer: 0, head: 0, text: 'CBABBC'});

// the native side: its data laid out as make web lays out the page's
fs.mkdirSync(DIR, {recursive: true});
const data = path.join(DIR, 'data');
fs.rmSync(data, {recursive: true, force: true});
fs.mkdirSync(data);
fs.symlinkSync(path.resolve('assets/embeddings.txt'), path.join(data, 'embeddings.txt'));
fs.symlinkSync(path.resolve('sentences'), path.join(data, 'sentences'));
fs.symlinkSync(path.resolve('assets/models'), path.join(data, 'models'));
fs.writeFileSync(path.join(DIR, 'nano-sort.json'), session(path.join(data, 'models/nano-sort')));
const line = execFileSync(NATIVE, [path.join(DIR, 'nano-sort.json'), String(N)],
                          {env: {...process.env, ATTNVIZ_DATADIR: data}}).toString().trim();
const field = k => (line.match(new RegExp(`${k}=([^ ]+)`)) || [])[1];
const native = {frame: +field('frame_ms'), toy: +field('toy_key_ms'), nano: +field('nano_key_ms')};
const [ax, ay] = field('cell_a').split(',').map(Number), [bx, by] = field('cell_b').split(',').map(Number);

const srv = spawn('python3', ['tools/web/serve.py', '--port', '0', '--quiet', 'build/web'],
                  {stdio: ['ignore', 'pipe', 'inherit']});
const url = await new Promise((ok, fail) => {
  let buf = '';
  srv.stdout.on('data', d => {
    const m = (buf += d).match(/http:\/\/127\.0\.0\.1:\d+\/attnviz\.html/);
    if (m) ok(m[0]);
  });
  srv.on('exit', code => fail(new Error(`tools/web/serve.py exited (${code})`)));
});
const browser = await puppeteer.launch({
  executablePath: process.env.ATTNVIZ_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
let page;
async function steps(n) {
  const from = await page.evaluate(() => Module.attnvizSteps | 0);
  await page.waitForFunction(k => (Module.attnvizSteps | 0) >= k, {timeout: TIMEOUT}, from + n);
}
// the page's step records from index i on
const records = i => page.evaluate(k => Module.attnvizTimes.slice(k), i);
const mark = () => page.evaluate(() => Module.attnvizTimes.length);
// the records of steps that drew (their draw count rose over the step before)
function drew(rs, before) {
  const out = [];
  let d = before;
  for (const r of rs) {
    if (r[4] > d) out.push(r);
    d = r[4];
  }
  return out;
}
const draws = () => page.evaluate(() => Module.attnvizDraws | 0);
// until no step drew for ms
async function quiet(ms) {
  for (let last = await draws(), since = Date.now(); Date.now() - since < ms;) {
    await steps(1);
    const d = await draws();
    if (d !== last) { last = d; since = Date.now(); }
  }
}

let out;
try {
  page = await browser.newPage();
  await page.setViewport({width: 1280, height: 800, deviceScaleFactor: 1});
  await page.goto(url);
  await page.waitForFunction(() => typeof Module === 'object' && Module.attnvizSteps > 0, {timeout: TIMEOUT});
  await page.evaluate(() => {
    Module.attnvizDraws = 0;
    for (const f of ['drawArrays', 'drawElements']) {
      const orig = GLctx[f];
      GLctx[f] = function() { Module.attnvizDraws++; return orig.apply(this, arguments); };
    }
    Module.attnvizTimes = [];
  });
  await steps(3);

  // the pointer between two cells: each motion's step, if it drew
  const frames = [];
  for (let i = 0; i < N; i++) {
    const at = await mark(), d0 = await draws();
    await page.mouse.move(i % 2 ? bx : ax, i % 2 ? by : ay);
    await steps(2);
    const d = drew((await records(at)).filter(r => r[1]), d0);
    if (d.length) frames.push(d[0][2] + d[0][3]);
  }

  // a key in the bar: the steps its events came in
  await page.keyboard.press('Slash');
  await quiet(200);
  const toy = [];
  for (let i = 0; i < N; i++) {
    const at = await mark();
    await page.keyboard.press(i % 2 ? 'Backspace' : 'KeyX');
    await steps(3);
    const rs = (await records(at)).filter(r => r[1]);
    if (rs.length) toy.push(rs.reduce((s, r) => s + r[2] + r[3], 0));
  }
  await page.keyboard.press('Escape');

  // nano-sort: dropped, computed; then keys in its bar
  await page.evaluate(text => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], 'nano-sort.json', {type: 'application/json'}));
    window.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, bubbles: true, cancelable: true}));
  }, session('/attnviz/models/nano-sort'));
  await quiet(1000);
  await page.keyboard.press('Slash');
  await quiet(300);
  const latency = [], busy = [];
  for (let i = 0; i < N; i++) {
    const at = await mark(), d0 = await draws();
    await page.keyboard.press(i % 2 ? 'Backspace' : 'KeyA');
    await quiet(150);
    const rs = await records(at), first = rs.find(r => r[1]), d = drew(rs, d0);
    if (!first || !d.length) continue;
    const last = d[d.length - 1];
    latency.push(last[0] + last[2] + last[3] - first[0]);
    busy.push(rs.filter(r => r[0] >= first[0] && r[0] <= last[0]).reduce((s, r) => s + r[2] + r[3], 0));
  }
  out = {frame: med(frames), toy: med(toy), nano: med(latency), busy: med(busy),
         counts: [frames.length, toy.length, latency.length]};
} finally {
  await browser.close();
  srv.kill();
}
const ratio = (p, n) => `${(p / n).toFixed(1)}×`;
console.log(`window frame (pointer between two cells): native ${native.frame.toFixed(2)} ms, page ${out.frame.toFixed(2)} ms (${ratio(out.frame, native.frame)}; ${out.counts[0]} of ${N} drew)`);
console.log(`toy keystroke (its events and frame): native ${native.toy.toFixed(2)} ms, page ${out.toy.toFixed(2)} ms (${ratio(out.toy, native.toy)}; ${out.counts[1]} of ${N})`);
console.log(`nano-sort keystroke (key to its last frame): native ${native.nano.toFixed(2)} ms, page ${out.nano.toFixed(2)} ms ` +
            `(the main thread busy ${out.busy.toFixed(2)} ms of it; ${out.counts[2]} of ${N})`);
// the same, a line for make bench (tests/bench/run.sh's field)
console.log(`page_bench frame_native_ms=${native.frame.toFixed(3)} frame_page_ms=${out.frame.toFixed(3)} ` +
            `toy_native_ms=${native.toy.toFixed(3)} toy_page_ms=${out.toy.toFixed(3)} ` +
            `nano_native_ms=${native.nano.toFixed(3)} nano_page_ms=${out.nano.toFixed(3)} nano_busy_ms=${out.busy.toFixed(3)}`);

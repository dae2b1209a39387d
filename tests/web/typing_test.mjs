// Typing fast into an open model's bar (make test-web). shakespeare-tiny's
// folder dropped on the page, then sentences/long.txt's first paragraph
// (136 tokens: the first 128 shown) typed into the bar three times, with
// no pause between the keys, while the model's worker sends its results.
//
// On the threaded page the browser's main thread, waiting on a lock the
// worker held, ran the worker's queued wake-up (a step of the loop) inside
// the step it was in: the nested step freed the result the outer one was
// drawing. The page then died of "memory access out of bounds" in
// lmsrc_present, hung, or WebGL said "glTexSubImage2D: Offset overflows
// texture dimensions" (in 1 to 46 of its steps a run). So: the page's
// steps (Module.attnvizTimes: each one's start and length) must never
// overlap, no page error and no WebGL error may come, and the frame must
// then be the native program's of the same state.
//
// usage (from the clone): node tests/web/typing_test.mjs [--single] OUTDIR
// --single: the one-thread page (plain python3 -m http.server)
// env: as page_test.mjs's, and ATTNVIZ_WEB_DIR (the page's folder; default build/web)
import fs from 'node:fs';
import path from 'node:path';
import {startServer} from './serve.mjs';
import {compare} from './png.mjs';
import {TIMEOUT, W, H, fmt, nativeData, nativeFrameIn, same, until} from './kit.mjs';

const SINGLE = process.argv[2] === '--single';
const OUT = path.resolve(process.argv[SINGLE ? 3 : 2] || 'build/web-test/out-typing');
const CHROMIUM = process.env.ATTNVIZ_CHROMIUM || '/usr/bin/chromium';
const NATIVE = process.env.ATTNVIZ_NATIVE_FRAME || 'build/web-test/native_frame';
const WEB_DIR = process.env.ATTNVIZ_WEB_DIR || 'build/web';
const MODULES = path.resolve(process.env.ATTNVIZ_PUPPETEER || 'build/web-test/node_modules');
const {default: puppeteer} = await import(path.join(MODULES, 'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'));
const ROUNDS = 3;

let failures = 0;
function check(ok, what) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  if (!ok) failures++;
}

// steps that ran inside another: [start, end] pairs (ms) overlapping the
// one before them in start order
function nested(times) {
  const spans = times.map(t => [t[0], t[0] + t[2] + t[3]]).sort((a, b) => a[0] - b[0]);
  let n = 0;
  for (let k = 1; k < spans.length; k++)
    if (spans[k][0] < spans[k - 1][1] - 0.01) n++;
  return n;
}

fs.rmSync(OUT, {recursive: true, force: true});
fs.mkdirSync(OUT, {recursive: true});
const DATA = nativeData(OUT);
const LONG = fs.readFileSync('sentences/long.txt', 'utf8').split('\n')[1];
const tinyDir = `open:${DATA}/models/shakespeare-tiny`;
const nOpen = nativeFrameIn(NATIVE, DATA, undefined, path.join(OUT, 'native-open.png'), tinyDir);
const nTyped = nativeFrameIn(NATIVE, DATA, undefined, path.join(OUT, 'native-typed.png'), tinyDir, 'key:/',
                             'key:Ctrl+U', `text:${LONG}`, 'key:Escape');
check(!same(compare(nOpen, nTyped)), `the typed text changes the native frame (${fmt(compare(nOpen, nTyped))})`);

const {srv, url} = await startServer(SINGLE, WEB_DIR);
const browser = await puppeteer.launch({
  executablePath: CHROMIUM, headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
const errors = [];
try {
  const page = await browser.newPage();
  await page.setViewport({width: W, height: H, deviceScaleFactor: 1});
  page.on('pageerror', e => errors.push((e.stack || e.message).split('\n').slice(0, 6).join(' | ')));
  page.on('error', e => errors.push(`the renderer: ${e.message}`));
  page.on('console', m => { if (m.type() === 'error' || /GL_INVALID|WebGL:/.test(m.text())) errors.push(m.text()); });
  await page.goto(url);
  await page.waitForFunction(() => typeof Module === 'object' && Module.attnvizSteps > 0, {timeout: TIMEOUT});
  const threaded = await page.evaluate(() => crossOriginIsolated && typeof SharedArrayBuffer === 'function');
  check(threaded === !SINGLE, `the ${SINGLE ? 'one-thread' : 'threaded'} page (threads: ${threaded})`);
  await page.evaluate(() => attnvizOpenFiles(FS.readdir('/attnviz/models/shakespeare-tiny').filter(f => f[0] !== '.')
    .map(f => [`shakespeare-tiny/${f}`, new File([FS.readFile(`/attnviz/models/shakespeare-tiny/${f}`)], f)]),
    ['shakespeare-tiny']));
  let r = compare(await until(page, nOpen, path.join(OUT, 'page-open.png')), nOpen);
  check(same(r), `shakespeare-tiny dropped: the native frame (${fmt(r)})`);
  await page.evaluate(() => { Module.attnvizTimes = []; Module.attnvizStepsDeferred = 0; });
  const t0 = Date.now();
  await page.keyboard.press('Slash');
  for (let k = 0; k < ROUNDS; k++) {
    await page.keyboard.down('Control');
    await page.keyboard.press('KeyU');
    await page.keyboard.up('Control');
    await page.keyboard.type(LONG);
  }
  await page.keyboard.press('Escape');
  const typedMs = Date.now() - t0;
  r = compare(await until(page, nTyped, path.join(OUT, 'page-typed.png')), nTyped);
  const {times, deferred} = await page.evaluate(() => ({times: Module.attnvizTimes, deferred: Module.attnvizStepsDeferred}));
  check(same(r), `${ROUNDS} × ${LONG.length} characters typed in ${typedMs} ms: the native frame (${fmt(r)})`);
  const n = nested(times);
  check(times.length > ROUNDS * LONG.length && n === 0,
        `no step ran inside another: ${n} of ${times.length} steps did (${deferred} kept for after their outer one)`);
} catch (e) {
  errors.push(`the test: ${e.message}`);
} finally {
  await browser.close().catch(() => {});
  srv.kill();
}
check(errors.length === 0, `no page error, WebGL error or hang (${errors.length ? errors.join('; ') : 'none'})`);
console.log(failures ? `typing_test: ${failures} check(s) FAILED` : 'typing_test: all checks passed');
process.exit(failures ? 1 : 0);

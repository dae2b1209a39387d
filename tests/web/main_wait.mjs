// How long the threaded page's main thread is held by a close, Ctrl+E's
// PNG export and the rollout (a measurement, not a test), and whether
// emscripten warned "Blocking on the main thread" in each: shakespeare-tiny
// made DEPTH layers deep (tests/web/deepen.mjs) opened on a text of about
// 120 tokens (its 128 positions hold it), then one of: O and Shift+L (the rollout through the last layer: its
// products from 96 tokens on are split over two threads, attnfile.c),
// Ctrl+E (the PNG, png.c's two halves), or the same session dropped again
// (the old model source closed: bg_destroy). Each action on a fresh page
// (emscripten warns once a page); its steps timed by the page
// (Module.attnvizTimes, as make web-bench reads them): the longest step
// after the key is printed, and the warnings during it.
//
// usage (from the clone, after make web): node tests/web/main_wait.mjs [DEPTH] [RUNS]
// env ATTNVIZ_WEB: the page's folder (default build/web)
import {spawn} from 'node:child_process';
import path from 'node:path';
import {deepenInPage} from './deepen.mjs';

const DEPTH = +(process.argv[2] || 12), RUNS = +(process.argv[3] || 2);
const MODULES = path.resolve(process.env.ATTNVIZ_PUPPETEER || 'build/web-test/node_modules');
const {default: puppeteer} = await import(path.join(MODULES, 'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'));
const WEB = process.env.ATTNVIZ_WEB || 'build/web', TIMEOUT = 60000;
const TEXT = Array(+(process.env.ATTNVIZ_REPEAT || 5)).fill('Now is the winter of our discontent made glorious summer by this sun of York.').join(' ');
const ACTIONS = ['O (rollout)', 'Ctrl+E (PNG)', 'dropped again (close)'];

const srv = spawn('python3', ['tools/web/serve.py', '--port', '0', '--quiet', WEB], {stdio: ['ignore', 'pipe', 'inherit']});
const url = await new Promise((ok, fail) => {
  let buf = '';
  srv.stdout.on('data', d => {
    const m = (buf += d).match(/http:\/\/127\.0\.0\.1:\d+\/attnviz\.html/);
    if (m) ok(m[0]);
  });
  srv.on('exit', code => fail(new Error(`serve.py exited (${code})`)));
});
const browser = await puppeteer.launch({
  executablePath: process.env.ATTNVIZ_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
try {
  for (let run = 0; run < ACTIONS.length * RUNS; run++) {
    const action = ACTIONS[run % ACTIONS.length];
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    await page.setViewport({width: 1280, height: 800, deviceScaleFactor: 1});
    let warnings = 0;
    page.on('console', m => { if (/Blocking on the main thread/.test(m.text())) warnings++; });
    page.on('error', e => console.log('page crashed:', e.message));
    await page.goto(url);
    await page.waitForFunction(() => typeof Module === 'object' && Module.attnvizSteps > 0, {timeout: TIMEOUT});
    const drop = async () => (await deepenInPage(page, DEPTH), page.evaluate(async text => {
      const files = [...window.deepFolder,
                     ['session.json', JSON.stringify({attention_file: `/dropped/${attnvizDrops + 1}/deep`, layer: 0, head: 0, text})]];
      await attnvizOpenFiles(files.map(([n, b]) => [n, new File([b], n.split('/').pop())]), ['session.json']);
      const t0 = performance.now();
      while (performance.now() - t0 < 30000) {
        const t = document.title;
        if (t.includes(text.slice(0, 20)) && !t.includes('opening')) return t;
        await new Promise(res => requestAnimationFrame(res));
      }
      return 'not shown: ' + document.title;
    }, TEXT));
    const settle = async n => {
      const from = await page.evaluate(() => Module.attnvizSteps | 0);
      await page.waitForFunction(k => (Module.attnvizSteps | 0) >= k, {timeout: TIMEOUT}, from + n);
    };
    const opened = await drop();
    await page.keyboard.press('Escape'); // the text bar has the keys after an open
    await settle(10);
    const before = warnings;
    await page.evaluate(() => { Module.attnvizTimes = []; });
    if (action === ACTIONS[0]) { // the rollout, then through the last layer (Shift+L from the first)
      await page.keyboard.press('o');
      await settle(4);
      await page.keyboard.down('Shift'); await page.keyboard.press('L'); await page.keyboard.up('Shift');
    }
    else if (action === ACTIONS[1]) {
      await page.keyboard.down('Control'); await page.keyboard.press('e'); await page.keyboard.up('Control');
    } else await drop();
    await settle(8);
    const rs = await page.evaluate(() => { const r = Module.attnvizTimes; Module.attnvizTimes = null; return r; });
    const longest = Math.max(0, ...rs.map(r => r[2] + r[3]));
    console.log(`${action} (${DEPTH} layers; "${opened.slice(0, 40)}", ${before} warnings before): ` +
                `longest step ${longest.toFixed(1)} ms, ${warnings - before} warnings`);
    if (process.env.ATTNVIZ_SHOT) await page.screenshot({path: `${process.env.ATTNVIZ_SHOT}-${run}.png`});
    await ctx.close();
  }
} finally {
  await browser.close();
  srv.kill();
}

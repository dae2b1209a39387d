// How long a dropped model holds the page (a measurement, not a test):
// shakespeare-tiny made 160 layers deep (128 MB, tests/web/deepen.mjs) and
// a session naming it dropped on a fresh page, as page_test.mjs and
// single_test.mjs drop it; every animation frame timed from the drop until
// the model is shown. Printed per run: the whole open, the copy into the
// page's memory (pre.js's attnvizOpenFiles, until it hands the session to
// the program), the longest gap between frames during the copy and in the
// whole open, and the status line's progress notes seen.
//
// usage (from the clone, after make web): node tests/web/drop_gap.mjs [--single] [RUNS]
// --single: the one-thread page (served without COOP/COEP); env ATTNVIZ_WEB: the
// page's folder (default build/web)
import {spawn} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {deepenInPage} from './deepen.mjs';

const SINGLE = process.argv[2] === '--single';
const RUNS = +(process.argv[SINGLE ? 3 : 2] || 3);
const MODULES = path.resolve(process.env.ATTNVIZ_PUPPETEER || 'build/web-test/node_modules');
const {default: puppeteer} = await import(path.join(MODULES, 'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'));
const DEPTH = 160, TIMEOUT = 60000;
const WEB = process.env.ATTNVIZ_WEB || 'build/web'; // another build of the page to measure (an older one)
const TEXT = 'Now is the winter of our discontent made glorious summer by this sun of York.';

const srv = SINGLE
  ? spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '-d', WEB],
          {stdio: ['ignore', 'pipe', 'ignore']})
  : spawn('python3', ['tools/web/serve.py', '--port', '0', '--quiet', WEB], {stdio: ['ignore', 'pipe', 'inherit']});
const url = await new Promise((ok, fail) => {
  let buf = '';
  srv.stdout.on('data', d => {
    buf += d;
    const m = SINGLE ? buf.match(/port (\d+)/) : buf.match(/http:\/\/127\.0\.0\.1:\d+\/attnviz\.html/);
    if (m) ok(SINGLE ? `http://127.0.0.1:${m[1]}/attnviz.html` : m[0]);
  });
  srv.on('exit', code => fail(new Error(`the server exited (${code})`)));
});
const browser = await puppeteer.launch({
  executablePath: process.env.ATTNVIZ_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
try {
  for (let run = 0; run < RUNS; run++) {
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    await page.setViewport({width: 1280, height: 800, deviceScaleFactor: 1});
    page.on('pageerror', e => console.log('page error:', e.message));
    await page.goto(url);
    await page.waitForFunction(() => typeof Module === 'object' && Module.attnvizSteps > 0, {timeout: TIMEOUT});
    await deepenInPage(page, DEPTH);
    const t = await page.evaluate(async text => {
      const files = [...window.deepFolder];
      files.push(['session.json', JSON.stringify({attention_file: `/dropped/${attnvizDrops + 1}/deep`, layer: 0, head: 0, text})]);
      // the copy's end: when pre.js hands the path to the program; its notes
      let copied = null;
      const notes = [];
      const orig = window.ccall, origProgress = window.attnvizProgress;
      window.ccall = function(name, r, types, args) {
        if (name === 'platform_web_dropped' && copied === null) copied = performance.now();
        return orig.apply(this, arguments);
      };
      // the page's status line (pre.js's attnvizProgress), where the copy's progress goes
      window.attnvizProgress = function(text) {
        if (text !== null) notes.push(text);
        return origProgress.apply(this, arguments);
      };
      const longtasks = [];
      const obs = new PerformanceObserver(l => longtasks.push(...l.getEntries().map(e => [e.startTime, e.duration])));
      obs.observe({entryTypes: ['longtask']});
      // the frames of a second without a drop, for comparison
      const idle = [];
      await new Promise(res => {
        const t0 = performance.now();
        const f = ts => { idle.push(ts); if (ts - t0 < 1000) requestAnimationFrame(f); else res(); };
        requestAnimationFrame(f);
      });
      let idleGap = 0;
      for (let i = 1; i < idle.length; i++) idleGap = Math.max(idleGap, idle[i] - idle[i - 1]);
      const frames = [];
      let rec = true;
      const tick = ts => { frames.push(ts); if (rec) requestAnimationFrame(tick); };
      await new Promise(res => requestAnimationFrame(ts => { frames.push(ts); requestAnimationFrame(tick); res(); }));
      // the Files made before the clock starts: a real drop's come from the browser
      const dropFiles = files.map(([name, data]) => [name, new File([data], name.split('/').pop())]);
      const dropped = performance.now();
      attnvizOpenFiles(dropFiles, ['session.json']);
      for (const end = performance.now() + 60000; performance.now() < end;) {
        const title = document.title;
        if (title.includes(text) && !title.includes('opening')) break;
        await new Promise(res => requestAnimationFrame(res));
      }
      const shown = performance.now();
      rec = false;
      window.ccall = orig;
      window.attnvizProgress = origProgress;
      obs.disconnect();
      const copies = Module.attnvizCopies || [];
      const c = copies[copies.length - 1];
      const during = (from, to) => longtasks.filter(([s, d]) => s + d > from && s < to).map(([s, d]) => d);
      const lt = {copy: during(dropped, copied), open: during(copied, shown)};
      const gap = (from, to) => {
        const before = frames.filter(f => f <= from).pop() ?? from;
        const after = frames.find(f => f >= to) ?? to;
        const inside = [before, ...frames.filter(f => f > before && f < after), after];
        let g = 0;
        for (let i = 1; i < inside.length; i++) g = Math.max(g, inside[i] - inside[i - 1]);
        return {gap: g, n: inside.length - 2};
      };
      return {open: shown - dropped, copy: copied - dropped, copyGap: gap(dropped, copied), gap: gap(dropped, shown),
              notes: notes.filter(n => /^reading/.test(n)).length, last: notes.filter(n => /^reading/.test(n)).pop() || '',
              bytes: files[0][1].length, idleGap, lt, c: c ? {slices: c.slices, longest: c.longest} : null,
              shownText: (document.getElementById('status') || {}).textContent};
    }, TEXT);
    console.log(`${SINGLE ? 'one-thread' : 'threaded'} run ${run + 1}: ${(t.bytes / 1048576).toFixed(0)} MB, ` +
                `open ${t.open.toFixed(0)} ms, copy ${t.copy.toFixed(0)} ms (longest gap ${t.copyGap.gap.toFixed(1)} ms, ` +
                `${t.copyGap.n} frames), whole open's longest gap ${t.gap.gap.toFixed(1)} ms (${t.gap.n} frames); ` +
                `${t.notes} progress notes${t.last ? `, last "${t.last}"` : ''}; ` +
                (t.c ? `${t.c.slices} slices, longest write ${t.c.longest.toFixed(1)} ms; ` : '') +
                `long tasks in the copy [${t.lt.copy.map(d => d.toFixed(0))}] ms, after it [${t.lt.open.map(d => d.toFixed(0))}] ms; ` +
                `a second without a drop: longest gap ${t.idleGap.toFixed(1)} ms`);
    await ctx.close();
  }
} finally {
  await browser.close();
  srv.kill();
}

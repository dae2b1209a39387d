// The page's first frame on the loopback (make web-bench): build/web
// served by tools/web/serve.py on 127.0.0.1, loaded N times by headless
// Chromium, each in a new page with the cache disabled; the time of the
// first frame drawn (Module.attnvizFirstFrame, performance.now() from the
// navigation's start) and the median.
//
// usage (from the clone): node tests/web/first_frame.mjs [N] [--plain]
//   --plain: served by python3 -m http.server (no COOP/COEP headers: the
//   one-thread build) instead of serve.py (the threaded build)
import {spawn} from 'node:child_process';
import path from 'node:path';

const N = +(process.argv[2] || 5);
const PLAIN = process.argv.includes('--plain');
const MODULES = path.resolve(process.env.ATTNVIZ_PUPPETEER || 'build/web-test/node_modules');
const {default: puppeteer} = await import(path.join(MODULES, 'puppeteer-core/lib/esm/puppeteer/puppeteer-core.js'));

const srv = PLAIN
  ? spawn('python3', ['-u', '-m', 'http.server', '0', '--bind', '127.0.0.1', '-d', 'build/web'],
          {stdio: ['ignore', 'pipe', 'ignore']})
  : spawn('python3', ['tools/web/serve.py', '--port', '0', '--quiet', 'build/web'],
          {stdio: ['ignore', 'pipe', 'inherit']});
const url = await new Promise((ok, fail) => {
  let buf = '';
  srv.stdout.on('data', d => {
    buf += d;
    const m = buf.match(/http:\/\/127\.0\.0\.1:\d+\/attnviz\.html/) || buf.match(/port (\d+)/);
    if (m) ok(m[1] ? `http://127.0.0.1:${m[1]}/attnviz.html` : m[0]);
  });
  srv.on('exit', code => fail(new Error(`the server exited (${code})`)));
});
const browser = await puppeteer.launch({
  executablePath: process.env.ATTNVIZ_CHROMIUM || '/usr/bin/chromium', headless: true,
  args: ['--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
const times = [], builds = new Set();
try {
  for (let i = 0; i < N; i++) {
    const page = await browser.newPage();
    await page.setCacheEnabled(false);
    await page.setViewport({width: 1280, height: 800, deviceScaleFactor: 1});
    await page.goto(url);
    await page.waitForFunction(() => typeof Module === 'object' && Module.attnvizSteps > 0, {timeout: 60000});
    const [t, build] = await page.evaluate(() => [Module.attnvizFirstFrame, Module.attnvizBuild]);
    times.push(t);
    builds.add(build);
    await page.close();
  }
} finally {
  await browser.close();
  srv.kill();
}
times.sort((a, b) => a - b);
console.log(`first frame (${[...builds].join(', ')}), ms after the navigation started (${N} loads, cache off): ` +
            `median ${times[N >> 1].toFixed(0)}, ${times.map(t => t.toFixed(0)).join(' ')}`);
// the same, a line for make bench (tests/bench/run.sh's field)
console.log(`first_frame build=${[...builds].join('+')} median_ms=${times[N >> 1].toFixed(1)} ` +
            `min_ms=${times[0].toFixed(1)} max_ms=${times[N - 1].toFixed(1)}`);

// What the page tests share (page_test, single_test, typing_test): the
// frame's size, "the same frame within anti-aliasing" (page_test.mjs's
// header says how it was measured), the canvas's pixels, the page's steps,
// and the native program's frame of the same state (tests/web/native_frame,
// software renderer).
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {compare, decodePng} from './png.mjs';

export const W = 1280, H = 800;
export const TIMEOUT = 60000;
// the same state differs by a mean of about 0.3 levels and 0.3% of pixels
export const MAX_MEAN = 2.0;     // mean absolute difference per channel, 0-255
export const MAX_FRACTION = 0.02; // pixels whose largest channel differs by more than 48

export const same = r => r.mean <= MAX_MEAN && r.fraction <= MAX_FRACTION;
export const fmt = r => r.why || `mean |Δ| ${r.mean.toFixed(3)}, ${(100 * r.fraction).toFixed(3)}% of pixels off by > 48`;

// the canvas as pixels: a screenshot of its rectangle (a WebGL canvas
// keeps no drawing buffer to read back once composited)
export async function canvasPixels(page, file) {
  const png = await page.screenshot({path: file, clip: {x: 0, y: 0, width: W, height: H}});
  return decodePng(Buffer.from(png), file);
}

// n more of the page's steps (each: the queued events, then a frame)
export async function steps(page, n) {
  const from = await page.evaluate(() => Module.attnvizSteps | 0);
  await page.waitForFunction(k => (Module.attnvizSteps | 0) >= k, {timeout: TIMEOUT}, from + n);
}

// the native program's data laid out in out/data as make web lays out the
// page's (/attnviz: embeddings.txt, sentences/, models/), found the same
// way (ATTNVIZ_DATADIR)
export function nativeData(out) {
  const d = path.join(out, 'data');
  fs.mkdirSync(d, {recursive: true});
  fs.symlinkSync(path.resolve('assets/embeddings.txt'), path.join(d, 'embeddings.txt'));
  fs.symlinkSync(path.resolve('sentences'), path.join(d, 'sentences'));
  fs.symlinkSync(path.resolve('assets/models'), path.join(d, 'models'));
  return d;
}

// native_frame's frame after the steps, the data in data; cwd: where a
// session saved with Ctrl+S goes (its prompt's default name is relative)
export function nativeFrameIn(native, data, cwd, file, ...stepsArgs) {
  execFileSync(path.resolve(native), [file, ...stepsArgs],
               {stdio: 'inherit', cwd, env: {...process.env, ATTNVIZ_DATADIR: data}});
  return decodePng(fs.readFileSync(file), file);
}

// the page's canvas until it is the native frame (the worker's result comes
// when it comes) or the time is up: the last one taken
export async function until(page, native, file) {
  let got = null;
  for (const end = Date.now() + TIMEOUT; Date.now() < end;) {
    await steps(page, 2);
    got = await canvasPixels(page, file);
    if (same(compare(got, native))) break;
  }
  return got;
}

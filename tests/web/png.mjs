// A PNG decoder for the browser test: 8-bit RGB or RGBA (or grey),
// not interlaced (what Chromium's screenshots and src/io/png.c write),
// into {width, height, rgb} with 3 bytes a pixel; such images compared,
// halved and cropped. Node's zlib inflates;
// every chunk's CRC is checked, so a damaged download fails here.
import zlib from 'node:zlib';

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function decodePng(buf, name = 'PNG') {
  if (buf.length < 8 || !buf.subarray(0, 8).equals(SIGNATURE)) throw new Error(`${name}: not a PNG (signature)`);
  let pos = 8, ihdr = null;
  const idat = [];
  while (pos + 12 <= buf.length) {
    const len = buf.readUInt32BE(pos), type = buf.toString('latin1', pos + 4, pos + 8);
    if (pos + 12 + len > buf.length) throw new Error(`${name}: chunk ${type} runs past the end`);
    const body = buf.subarray(pos + 8, pos + 8 + len);
    if (crc32(buf.subarray(pos + 4, pos + 8 + len)) !== buf.readUInt32BE(pos + 8 + len))
      throw new Error(`${name}: chunk ${type} has a bad CRC`);
    if (type === 'IHDR') ihdr = body;
    else if (type === 'IDAT') idat.push(body);
    else if (type === 'IEND') break;
    pos += 12 + len;
  }
  if (!ihdr) throw new Error(`${name}: no IHDR`);
  const width = ihdr.readUInt32BE(0), height = ihdr.readUInt32BE(4);
  const depth = ihdr[8], ctype = ihdr[9], interlace = ihdr[12];
  const channels = {0: 1, 2: 3, 6: 4}[ctype];
  if (depth !== 8 || !channels || interlace !== 0)
    throw new Error(`${name}: depth ${depth}, colour type ${ctype}, interlace ${interlace} not read here`);
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  if (raw.length !== height * (stride + 1)) throw new Error(`${name}: ${raw.length} bytes of pixels for ${width}x${height}`);
  const px = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)], src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = px.subarray(y * stride, (y + 1) * stride), up = y ? px.subarray((y - 1) * stride, y * stride) : null;
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? out[i - channels] : 0, b = up ? up[i] : 0, c = up && i >= channels ? up[i - channels] : 0;
      let p;
      switch (f) {
        case 0: p = 0; break;
        case 1: p = a; break;
        case 2: p = b; break;
        case 3: p = (a + b) >> 1; break;
        case 4: { const q = a + b - c, pa = Math.abs(q - a), pb = Math.abs(q - b), pc = Math.abs(q - c);
                  p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c; break; }
        default: throw new Error(`${name}: row ${y} has filter ${f}`);
      }
      out[i] = (src[i] + p) & 0xff;
    }
  }
  const rgb = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++)
    for (let k = 0; k < 3; k++) rgb[i * 3 + k] = px[i * channels + (channels === 1 ? 0 : k)];
  return {width, height, rgb};
}

// How far apart two images of the same size are: the mean absolute
// difference per channel (0-255), and the fraction of pixels whose largest
// channel differs by more than 48 (why: their sizes differ)
export function compare(a, b) {
  if (a.width !== b.width || a.height !== b.height)
    return {mean: Infinity, fraction: 1, why: `${a.width}x${a.height} vs ${b.width}x${b.height}`};
  let sum = 0, far = 0;
  for (let i = 0; i < a.rgb.length; i += 3) {
    let m = 0;
    for (let k = 0; k < 3; k++) {
      const d = Math.abs(a.rgb[i + k] - b.rgb[i + k]);
      sum += d;
      if (d > m) m = d;
    }
    if (m > 48) far++;
  }
  return {mean: sum / a.rgb.length, fraction: far / (a.width * a.height)};
}

// a 2×2 box filter: a frame drawn at twice the size, at the size of one drawn at 1
export function halve(img) {
  const w = img.width >> 1, h = img.height >> 1, rgb = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++)
      for (let k = 0; k < 3; k++) {
        const at = (yy, xx) => img.rgb[((2 * y + yy) * img.width + 2 * x + xx) * 3 + k];
        rgb[(y * w + x) * 3 + k] = (at(0, 0) + at(0, 1) + at(1, 0) + at(1, 1) + 2) >> 2;
      }
  return {width: w, height: h, rgb};
}

// the rectangle [x0, x1) × [y0, y1) of img
export function crop(img, x0, y0, x1, y1) {
  const w = x1 - x0, h = y1 - y0, rgb = Buffer.alloc(w * h * 3);
  for (let y = 0; y < h; y++)
    img.rgb.copy(rgb, y * w * 3, ((y0 + y) * img.width + x0) * 3, ((y0 + y) * img.width + x1) * 3);
  return {width: w, height: h, rgb};
}

// What every official client's check shares: the simulator it is pointed
// at, a fetch that reaches nothing but that simulator, and the checks of
// a downloaded output. oracle_test.go runs each <provider>.test.mjs with
// node --test, with the simulator's address and keys in the environment.

import assert from 'node:assert/strict';

/**
 * The simulator under test, as oracle_test.go started it.
 * @returns {{url: string, key: string, wrongKey: string, fetch: typeof fetch, env: (name: string) => string, jobs: () => Promise<number>}}
 */
export function sim() {
  const env = (name) => {
    const v = process.env[name];
    if (!v) throw new Error(`${name} is not set: run this check through oracle_test.go (go test ./internal/provider/oracle)`);
    return v;
  };
  const url = env('ORACLE_URL');
  const origin = new URL(url).origin;
  // Every request any client makes goes through this fetch: one that
  // leaves the simulator's origin (a provider's real host, a CDN, an
  // upload service) is refused before it is sent, so a check can never
  // reach a real provider, whatever a client does by itself.
  const guarded = async (input, init) => {
    const target = new URL(typeof input === 'string' || input instanceof URL ? String(input) : input.url);
    if (target.origin !== origin) {
      throw new Error(`the client asked for ${target.href}, outside the simulator (${origin}): refused`);
    }
    return fetch(input, init);
  };
  // jobs is how many jobs the simulator has made (its /_sim/jobs report,
  // which needs no key): a refused request makes none.
  const jobs = async () => (await (await guarded(url + '/_sim/jobs')).json()).jobs.length;
  return { url, key: env('ORACLE_KEY'), wrongKey: env('ORACLE_WRONG_KEY'), fetch: guarded, env, jobs };
}

/**
 * Downloads url through fetchFn and reads what the file is.
 * @returns {Promise<{type: string, format: string, width: number, height: number, frames: number, bytes: Uint8Array}>}
 */
export async function download(fetchFn, url) {
  const res = await fetchFn(url);
  assert.equal(res.status, 200, `GET ${url}: ${res.status}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { type: res.headers.get('content-type') ?? '', ...probe(bytes), bytes };
}

/** Reads a picture's or a video's format and size from its first bytes. */
export function probe(b) {
  const ascii = (from, to) => String.fromCharCode(...b.subarray(from, to));
  if (b.length > 24 && b[0] === 0x89 && ascii(1, 4) === 'PNG') {
    const dv = new DataView(b.buffer, b.byteOffset);
    return { format: 'png', width: dv.getUint32(16), height: dv.getUint32(20), frames: 1 };
  }
  if (b.length > 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    return { format: 'jpeg', ...jpegSize(b), frames: 1 };
  }
  if (b.length > 10 && (ascii(0, 6) === 'GIF89a' || ascii(0, 6) === 'GIF87a')) {
    let frames = 0;
    for (let i = 0; i + 1 < b.length; i++) {
      // A graphic control extension precedes each frame.
      if (b[i] === 0x21 && b[i + 1] === 0xf9) frames++;
    }
    return { format: 'gif', width: b[6] | (b[7] << 8), height: b[8] | (b[9] << 8), frames };
  }
  if (b.length > 12 && ascii(4, 8) === 'ftyp') {
    return { format: 'mp4', width: 0, height: 0, frames: 0 };
  }
  return { format: 'unknown', width: 0, height: 0, frames: 0 };
}

function jpegSize(b) {
  for (let i = 2; i + 9 < b.length;) {
    if (b[i] !== 0xff) break;
    const marker = b[i + 1];
    const len = (b[i + 2] << 8) | b[i + 3];
    if (marker >= 0xc0 && marker <= 0xc3) {
      return { height: (b[i + 5] << 8) | b[i + 6], width: (b[i + 7] << 8) | b[i + 8] };
    }
    i += 2 + len;
  }
  return { width: 0, height: 0 };
}

/** Checks that f, a download, is a picture (of width x height when given). */
export function assertImage(f, width, height) {
  assert.ok(['png', 'jpeg'].includes(f.format), `want a picture, got ${f.format} (${f.type})`);
  assert.match(f.type, /^image\/(png|jpeg)/, 'the file is served as a picture');
  assert.ok(f.width > 0 && f.height > 0, `the picture has a size, got ${f.width}x${f.height}`);
  if (width !== undefined) assert.equal(f.width, width, 'the picture is as wide as the answer says');
  if (height !== undefined) assert.equal(f.height, height, 'the picture is as tall as the answer says');
}

/** Checks that f, a download, is a video: an animation of more than one frame. */
export function assertVideo(f) {
  if (f.format === 'mp4') return;
  assert.equal(f.format, 'gif', `want a video (the simulators make animated GIFs), got ${f.format} (${f.type})`);
  assert.ok(f.frames > 1, `a video has more than one frame, got ${f.frames}`);
}

/** Polls get until done(answer) is true, at most timeoutMs. */
export async function until(get, done, { interval = 100, timeoutMs = 20000 } = {}) {
  const start = Date.now();
  for (;;) {
    const a = await get();
    if (done(a)) return a;
    if (Date.now() - start > timeoutMs) {
      throw new Error(`still not done after ${timeoutMs} ms: ${JSON.stringify(a)}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/** A small PNG (one red pixel), for the inputs that take a picture. */
export const onePixelPNG = Uint8Array.from(atob(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='), (c) => c.charCodeAt(0));

/** onePixelPNG as a data: URI. */
export const onePixelDataURI = 'data:image/png;base64,' + Buffer.from(onePixelPNG).toString('base64');

// Replicate's official client, replicate, against genform's Replicate
// simulator: run (the client's highest-level helper, which sends
// Prefer: wait and then polls), predictions.create/get/list/cancel,
// paginate, accounts.current (what genform checks a key with), a failed
// prediction and a wrong key.
//
// The client is pointed at the simulator with its baseUrl option
// (index.js). useFileOutput is off: the client turns only https: and
// data: outputs into FileOutput streams, and the simulator's files are
// http: on the loopback, so the outputs are URLs either way; each is
// downloaded here.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import Replicate from 'replicate';
import { sim, download, assertImage, assertVideo, until } from './oracle.mjs';

const s = sim();

function client(auth) {
  return new Replicate({ auth, baseUrl: s.url + '/v1', fetch: s.fetch, useFileOutput: false });
}

const IMAGE = 'black-forest-labs/flux-schnell';
const VIDEO = 'minimax/video-01';
const HASH = 'a'.repeat(64);

const isAPIError = (status) => (err) => err.name === 'ApiError' && err.response?.status === status;

test('run an official model: images, each downloaded', async () => {
  const replicate = client(s.key);
  const progress = [];
  const out = await replicate.run(IMAGE, { input: { prompt: 'a lighthouse', num_outputs: 2, aspect_ratio: '1:1' } },
    (p) => progress.push(p.status));
  assert.ok(Array.isArray(out) && out.length === 2, `output ${JSON.stringify(out)}`);
  assert.equal(progress.at(-1), 'succeeded');
  for (const u of out) assertImage(await download(s.fetch, u));
});

test('run a pinned version, polling', async () => {
  const replicate = client(s.key);
  const out = await replicate.run(`${IMAGE}:${HASH}`, { input: { prompt: 'a red door' }, wait: { mode: 'poll', interval: 100 } });
  assert.equal(out.length, 1);
  assertImage(await download(s.fetch, out[0]));
});

test('a video model: one URL, a video', async () => {
  const replicate = client(s.key);
  const out = await replicate.run(VIDEO, { input: { prompt: 'waves', duration: 2 }, wait: { mode: 'poll', interval: 100 } });
  assert.equal(typeof out, 'string');
  assertVideo(await download(s.fetch, out));
});

test('predictions.create, get, wait and list: the flow genform follows', async () => {
  const replicate = client(s.key);
  const p = await replicate.predictions.create({ model: IMAGE, input: { prompt: 'a blue boat', num_outputs: 1 } });
  assert.equal(p.status, 'starting');
  assert.equal(p.model, IMAGE);
  assert.ok(p.urls.get.startsWith(s.url + '/v1/predictions/' + p.id));
  const byVersion = await replicate.predictions.create({ version: HASH, input: { prompt: 'a green boat' } });
  assert.equal(byVersion.version, HASH);
  const done = await replicate.wait(p, { interval: 100 });
  assert.equal(done.status, 'succeeded');
  assert.equal(typeof done.metrics?.predict_time, 'number');
  const again = await replicate.predictions.get(p.id);
  assert.deepEqual(again.output, done.output);
  assertImage(await download(s.fetch, again.output[0]));
  const page = await replicate.predictions.list();
  const ids = page.results.map((x) => x.id);
  assert.ok(ids.includes(p.id) && ids.includes(byVersion.id), `the list names both predictions: ${ids}`);
  const all = [];
  for await (const batch of replicate.paginate(replicate.predictions.list)) all.push(...batch);
  assert.ok(all.some((x) => x.id === p.id), 'paginate reaches it');
});

test('cancel a running prediction', async () => {
  const replicate = client(s.key);
  const p = await replicate.predictions.create({ model: IMAGE, input: { prompt: 'a slow cat [slow]' } });
  const c = await replicate.predictions.cancel(p.id);
  assert.equal(c.id, p.id);
  const end = await until(() => replicate.predictions.get(p.id), (x) => ['canceled', 'aborted', 'failed', 'succeeded'].includes(x.status));
  assert.ok(['canceled', 'aborted'].includes(end.status), `after cancel: ${end.status}`);
});

test('a failed prediction: run raises it with its error', async () => {
  const replicate = client(s.key);
  await assert.rejects(replicate.run(IMAGE, { input: { prompt: 'a cat [fail]' }, wait: { mode: 'poll', interval: 100 } }),
    /Prediction failed: .+/);
});

test('the account of the key (how genform checks a key)', async () => {
  const acct = await client(s.key).accounts.current();
  assert.ok(acct.username && acct.type);
});

test('a wrong key: ApiError 401, nothing made', async () => {
  const replicate = client(s.wrongKey);
  const before = await s.jobs();
  await assert.rejects(replicate.predictions.create({ model: IMAGE, input: { prompt: 'a cat' } }), isAPIError(401));
  assert.equal(await s.jobs(), before, 'a refused key made a prediction');
  await assert.rejects(replicate.accounts.current(), isAPIError(401));
});

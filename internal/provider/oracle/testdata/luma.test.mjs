// Luma's official client, lumaai, against genform's Luma simulator:
// generations.image.create and generations.create (a video, from text and
// between two key frames), each followed with generations.get (the client
// has no waiting helper); generations.list; generations.delete; credits
// and ping (what genform checks a key with); a failed generation, a body
// the API refuses, and a wrong key.
//
// The client is pointed at the simulator with its baseURL option;
// maxRetries 0, so that each refusal is seen as it is answered.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import LumaAI from 'lumaai';
import { sim, download, assertImage, assertVideo, until } from './oracle.mjs';

const s = sim();

function client(authToken) {
  return new LumaAI({ authToken, baseURL: s.url, fetch: s.fetch, maxRetries: 0 });
}

const settled = (g) => g.state === 'completed' || g.state === 'failed';

async function finished(c, g) {
  return until(() => c.generations.get(g.id), settled);
}

test('generations.image.create, then get until completed: a picture, downloaded', async () => {
  const c = client(s.key);
  const g = await c.generations.image.create({ model: 'photon-1', prompt: 'a lighthouse at dusk', aspect_ratio: '1:1' });
  assert.equal(g.state, 'queued');
  assert.equal(g.generation_type, 'image');
  const done = await finished(c, g);
  assert.equal(done.state, 'completed');
  assert.equal(done.request?.model, 'photon-1');
  const f = await download(s.fetch, done.assets.image);
  assertImage(f);
  assert.equal(f.width, f.height, 'aspect_ratio 1:1 is square');
});

test('generations.create: a video from text, then one between two key frames', async () => {
  const c = client(s.key);
  const img = await finished(c, await c.generations.image.create({ model: 'photon-flash-1', prompt: 'a harbour at noon', aspect_ratio: '16:9' }));
  const g = await c.generations.create({ model: 'ray-2', prompt: 'waves on a beach', aspect_ratio: '16:9', duration: '5s', resolution: '720p' });
  assert.equal(g.generation_type, 'video');
  const done = await finished(c, g);
  assert.equal(done.state, 'completed');
  assertVideo(await download(s.fetch, done.assets.video));
  const between = await c.generations.create({
    model: 'ray-flash-2', prompt: 'noon to night', duration: '5s',
    keyframes: { frame0: { type: 'image', url: img.assets.image }, frame1: { type: 'generation', id: done.id } },
  });
  assertVideo(await download(s.fetch, (await finished(c, between)).assets.video));
});

test('every model the client lists, with each resolution and duration its types allow', async () => {
  const c = client(s.key);
  const img = await finished(c, await c.generations.image.create({ model: 'photon-1', prompt: 'a quay at dawn', aspect_ratio: '4:3', format: 'png' }));
  // The image models' references: image_ref and style_ref (weighted
  // URLs), character_ref (an identity's images), modify_image_ref.
  const refs = await c.generations.image.create({
    model: 'photon-flash-1', prompt: 'the quay in the style of a woodcut', aspect_ratio: '9:21', format: 'jpg',
    image_ref: [{ url: img.assets.image, weight: 0.8 }], style_ref: [{ url: img.assets.image, weight: 0.5 }],
    character_ref: { identity0: { images: [img.assets.image] } },
  });
  assert.equal((await finished(c, refs)).state, 'completed');
  const modified = await c.generations.image.create({
    model: 'photon-1', prompt: 'the quay in snow', modify_image_ref: { url: img.assets.image, weight: 1 },
  });
  assert.equal((await finished(c, modified)).state, 'completed');
  for (const model of ['ray-2', 'ray-flash-2']) {
    for (const resolution of ['540p', '720p', '1080p', '4k']) {
      for (const duration of ['5s', '9s']) {
        const g = await c.generations.create({ model, prompt: `a quay, ${resolution}, ${duration}`, resolution, duration, aspect_ratio: '21:9' });
        assert.equal(g.state, 'queued', `${model} ${resolution} ${duration}`);
        assert.equal(g.request?.model, model);
      }
    }
  }
  // A looping video from one key frame, with a concept.
  const loop = await c.generations.create({
    model: 'ray-2', prompt: 'the quay, looping', loop: true, concepts: [{ key: 'dolly_zoom' }],
    keyframes: { frame0: { type: 'image', url: img.assets.image } },
  });
  assertVideo(await download(s.fetch, (await finished(c, loop)).assets.video));
});

test('generations.list names them, newest first; limit and offset page through', async () => {
  const c = client(s.key);
  const a = await c.generations.image.create({ model: 'photon-1', prompt: 'one' });
  const b = await c.generations.image.create({ model: 'photon-1', prompt: 'two' });
  const page = await c.generations.list({ limit: 100 });
  const ids = page.generations.map((g) => g.id);
  assert.ok(ids.indexOf(b.id) >= 0 && ids.indexOf(b.id) < ids.indexOf(a.id), `newest first: ${ids}`);
  assert.equal(typeof page.count, 'number');
  assert.equal(typeof page.has_more, 'boolean');
  const second = await c.generations.list({ limit: 1, offset: 1 });
  assert.equal(second.generations.length, 1);
  assert.equal(second.generations[0].id, ids[1]);
});

test('generations.delete: gone from get and list', async () => {
  const c = client(s.key);
  const g = await c.generations.image.create({ model: 'photon-1', prompt: 'a slow cat [slow]' });
  await c.generations.delete(g.id);
  await assert.rejects(c.generations.get(g.id), (err) => err instanceof LumaAI.NotFoundError);
  const page = await c.generations.list();
  assert.ok(!page.generations.some((x) => x.id === g.id));
});

test('a failed generation reports its failure_reason', async () => {
  const c = client(s.key);
  const done = await finished(c, await c.generations.image.create({ model: 'photon-1', prompt: 'a cat [fail]' }));
  assert.equal(done.state, 'failed');
  assert.ok(done.failure_reason);
});

test('a body the API refuses: UnprocessableEntityError or BadRequestError, nothing made', async () => {
  const c = client(s.key);
  const before = await s.jobs();
  await assert.rejects(c.generations.image.create({ model: 'photon-1', prompt: 'a cat', aspect_ratio: '5:4' }),
    (err) => err instanceof LumaAI.UnprocessableEntityError);
  await assert.rejects(c.generations.create({ model: 'ray-2', prompt: 'a cat', duration: '7s' }),
    (err) => err instanceof LumaAI.BadRequestError);
  assert.equal(await s.jobs(), before, 'a refused body made a generation');
});

test('credits and ping: how genform checks a key', async () => {
  const c = client(s.key);
  const credits = await c.credits.get();
  assert.equal(typeof credits.credit_balance, 'number');
  const pong = await c.ping.check();
  assert.ok(pong.message);
});

test('a wrong key: AuthenticationError, nothing made', async () => {
  const c = client(s.wrongKey);
  const before = await s.jobs();
  await assert.rejects(c.generations.image.create({ model: 'photon-1', prompt: 'a cat' }),
    (err) => err instanceof LumaAI.AuthenticationError && err.status === 401);
  assert.equal(await s.jobs(), before, 'a refused key made a generation');
  await assert.rejects(c.credits.get(), (err) => err instanceof LumaAI.AuthenticationError);
});

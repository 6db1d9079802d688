// fal's official client, @fal-ai/client, against genform's fal simulator:
// the queue flows genform uses (submit, status, result, cancel) and the
// client's own highest-level helper, subscribe.
//
// The client builds every URL on https://queue.fal.run; its
// requestMiddleware option (config.d.ts) rewrites each request before it
// is sent, which is how it is pointed at the simulator.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createFalClient, ApiError } from '@fal-ai/client';
import { sim, download, assertImage, assertVideo, until } from './oracle.mjs';

const s = sim();
const QUEUE = 'https://queue.fal.run/';

function client(key) {
  return createFalClient({
    credentials: key,
    fetch: s.fetch,
    requestMiddleware: async (req) => {
      assert.ok(req.url.startsWith(QUEUE), `the client asked for ${req.url}, not fal's queue`);
      return { ...req, url: s.url + '/' + req.url.slice(QUEUE.length) };
    },
  });
}

const IMAGE = 'fal-ai/flux/schnell';
const VIDEO = 'fal-ai/kling-video/v2/master/text-to-video';

test('subscribe makes FLUX images, and each file downloads as the picture the answer describes', async () => {
  const fal = client(s.key);
  const seen = [];
  let enqueued = '';
  const res = await fal.subscribe(IMAGE, {
    input: { prompt: 'a lighthouse at dusk', num_images: 2, image_size: 'square' },
    pollInterval: 100,
    onEnqueue: (id) => { enqueued = id; },
    onQueueUpdate: (u) => seen.push(u.status),
  });
  assert.ok(enqueued, 'onEnqueue heard the request id');
  assert.equal(res.requestId, enqueued, 'the result names the request it answers (x-fal-request-id)');
  assert.equal(seen.at(-1), 'COMPLETED');
  assert.equal(res.data.images.length, 2);
  assert.equal(typeof res.data.seed, 'number');
  for (const im of res.data.images) {
    assertImage(await download(s.fetch, im.url), im.width, im.height);
    assert.equal(im.width, 512, 'image_size square is 512x512');
  }
});

test('queue.submit, status and result: the flow genform follows', async () => {
  const fal = client(s.key);
  const sub = await fal.queue.submit(IMAGE, { input: { prompt: 'a red door', num_images: 1, image_size: 'landscape_4_3' } });
  assert.ok(sub.request_id);
  assert.equal(sub.status, 'IN_QUEUE');
  for (const u of [sub.status_url, sub.response_url, sub.cancel_url]) {
    assert.ok(u.startsWith(s.url + '/fal-ai/flux/requests/' + sub.request_id), `${u} follows fal's URLs`);
  }
  const st = await until(() => fal.queue.status(IMAGE, { requestId: sub.request_id, logs: true }), (a) => a.status === 'COMPLETED');
  assert.equal(st.request_id, sub.request_id);
  const res = await fal.queue.result(IMAGE, { requestId: sub.request_id });
  assert.equal(res.requestId, sub.request_id);
  assert.equal(res.data.images.length, 1);
  assertImage(await download(s.fetch, res.data.images[0].url), 1024, 768);
});

test('subscribe makes a video, downloaded', async () => {
  const fal = client(s.key);
  const res = await fal.subscribe(VIDEO, { input: { prompt: 'waves on a beach', duration: '5' }, pollInterval: 100 });
  assert.ok(res.data.video.url);
  assertVideo(await download(s.fetch, res.data.video.url));
});

test('a failed request: subscribe raises the ApiError of its result', async () => {
  const fal = client(s.key);
  await assert.rejects(
    fal.subscribe(IMAGE, { input: { prompt: 'a cat [fail]' }, pollInterval: 100 }),
    (err) => err instanceof ApiError && err.status === 500 && /runner_server_error|internal server error/i.test(JSON.stringify(err.body)),
  );
});

test('cancel: a running request is signalled; a completed one is refused', async () => {
  const fal = client(s.key);
  const slow = await fal.queue.submit(IMAGE, { input: { prompt: 'a slow cat [slow]' } });
  await fal.queue.cancel(IMAGE, { requestId: slow.request_id });
  const done = await fal.queue.submit(IMAGE, { input: { prompt: 'a quick cat' } });
  await until(() => fal.queue.status(IMAGE, { requestId: done.request_id }), (a) => a.status === 'COMPLETED');
  await assert.rejects(fal.queue.cancel(IMAGE, { requestId: done.request_id }),
    (err) => err instanceof ApiError && err.status === 400 && err.body?.status === 'ALREADY_COMPLETED');
});

test('a wrong key: the client raises ApiError 401 and nothing is made', async () => {
  const fal = client(s.wrongKey);
  const before = await s.jobs();
  await assert.rejects(fal.queue.submit(IMAGE, { input: { prompt: 'a cat' } }),
    (err) => err instanceof ApiError && err.status === 401);
  assert.equal(await s.jobs(), before, 'a refused key made a job');
  await assert.rejects(fal.queue.status(IMAGE, { requestId: '00000000-0000-0000-0000-000000000000' }),
    (err) => err instanceof ApiError && err.status === 401);
});

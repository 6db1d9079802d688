// Runway's official client, @runwayml/sdk, against genform's Runway
// simulator: textToImage, imageToVideo and textToVideo, each followed by
// the client's own waitForTaskOutput; tasks.retrieve and tasks.delete
// (cancel); organization.retrieve (what genform checks a key with); a
// failed task and a wrong key.
//
// The client is pointed at the simulator with its baseURL option; it
// sends X-Runway-Version itself. waitForTaskOutput waits six seconds
// (give or take one and a half) before each read of a task, so the flows
// run at once.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import RunwayML, { TaskFailedError } from '@runwayml/sdk';
import { sim, download, assertImage, assertVideo, until, onePixelDataURI } from './oracle.mjs';

const s = sim();

// The models the client lists for each create endpoint, read from its
// own declarations (resources/<endpoint>.d.ts: one interface a model).
function clientModels(resource) {
  const dir = dirname(createRequire(import.meta.url).resolve('@runwayml/sdk'));
  const src = readFileSync(join(dir, 'resources', resource + '.d.ts'), 'utf8');
  return [...src.matchAll(/^\s+model: '([^']+)';$/gm)].map((m) => m[1]);
}

function client(apiKey) {
  return new RunwayML({ apiKey, baseURL: s.url, fetch: s.fetch, maxRetries: 0 });
}

describe('@runwayml/sdk', { concurrency: true }, () => {
  test('textToImage, waitForTaskOutput: a picture, downloaded', async () => {
    const task = await client(s.key).textToImage
      .create({ model: 'gen4_image', promptText: 'a lighthouse at dusk', ratio: '1920:1080', seed: 7 })
      .waitForTaskOutput();
    assert.equal(task.status, 'SUCCEEDED');
    assert.equal(task.output.length, 1);
    assertImage(await download(s.fetch, task.output[0]));
  });

  test('imageToVideo from a data URI, waitForTaskOutput: a video, downloaded', async () => {
    const task = await client(s.key).imageToVideo
      .create({ model: 'gen4_turbo', promptImage: onePixelDataURI, promptText: 'the boats rock', ratio: '1280:720', duration: 5 })
      .waitForTaskOutput();
    assert.equal(task.status, 'SUCCEEDED');
    assertVideo(await download(s.fetch, task.output[0]));
  });

  test('imageToVideo with a first and a last frame', async () => {
    const task = await client(s.key).imageToVideo
      .create({
        model: 'veo3.1', promptText: 'day to night', ratio: '1280:720', duration: 4,
        promptImage: [{ uri: onePixelDataURI, position: 'first' }, { uri: onePixelDataURI, position: 'last' }],
      })
      .waitForTaskOutput();
    assertVideo(await download(s.fetch, task.output[0]));
  });

  test('textToVideo, waitForTaskOutput: a video, downloaded', async () => {
    const task = await client(s.key).textToVideo
      .create({ model: 'veo3.1', promptText: 'waves on a beach', ratio: '1280:720', duration: 4 })
      .waitForTaskOutput();
    assertVideo(await download(s.fetch, task.output[0]));
  });

  test('tasks.retrieve while it waits and while it runs, then tasks.delete cancels it', async () => {
    const c = client(s.key);
    const { id } = await c.textToImage.create({ model: 'gen4_image', promptText: 'a slow cat [slow]', ratio: '1080:1080' });
    // PENDING for its first tenth (0.8 s), unless the machine is slower.
    const first = await c.tasks.retrieve(id);
    assert.equal(first.id, id);
    assert.ok(['PENDING', 'THROTTLED', 'RUNNING'].includes(first.status), `a task just made: ${first.status}`);
    const running = await until(() => c.tasks.retrieve(id), (x) => x.status !== 'PENDING' && x.status !== 'THROTTLED', { interval: 200 });
    assert.equal(running.status, 'RUNNING');
    assert.ok(running.progress >= 0 && running.progress <= 1, `progress ${running.progress}`);
    await c.tasks.delete(id);
    try {
      const after = await c.tasks.retrieve(id);
      assert.equal(after.status, 'CANCELLED');
    } catch (err) {
      assert.ok(err instanceof RunwayML.NotFoundError, `after delete: ${err}`);
    }
  });

  test('a failed task: waitForTaskOutput raises TaskFailedError with its failure', async () => {
    await assert.rejects(
      client(s.key).textToImage.create({ model: 'gen4_image', promptText: 'a cat [fail]', ratio: '1080:1080' }).waitForTaskOutput(),
      (err) => err instanceof TaskFailedError && err.taskDetails.status === 'FAILED' && typeof err.taskDetails.failure === 'string' && !!err.taskDetails.failureCode,
    );
  });

  test('every model the client lists for an endpoint is taken there', async () => {
    const c = client(s.key);
    const endpoints = [
      ['text-to-image', (model) => c.textToImage.create({ model, promptText: 'a cat', ratio: '1280:720' })],
      ['image-to-video', (model) => c.imageToVideo.create({ model, promptText: 'a cat', ratio: '1280:720', promptImage: onePixelDataURI })],
      ['text-to-video', (model) => c.textToVideo.create({ model, promptText: 'a cat', ratio: '1280:720' })],
    ];
    const refused = [];
    for (const [resource, create] of endpoints) {
      const models = clientModels(resource);
      assert.ok(models.length > 0, `the client lists models for ${resource}`);
      for (const model of models) {
        try {
          assert.ok((await create(model)).id);
        } catch (err) {
          refused.push(`${resource} ${model}: ${err.message}`);
        }
      }
    }
    assert.deepEqual(refused, [], 'the simulator refuses models the client lists');
  });

  test('organization.retrieve: how genform checks a key', async () => {
    const org = await client(s.key).organization.retrieve();
    assert.equal(typeof org.creditBalance, 'number');
    assert.ok(org.tier && org.tier.models);
  });

  test('a wrong key: AuthenticationError', async () => {
    const c = client(s.wrongKey);
    await assert.rejects(c.textToImage.create({ model: 'gen4_image', promptText: 'a cat', ratio: '1080:1080' }),
      (err) => err instanceof RunwayML.AuthenticationError && err.status === 401);
    await assert.rejects(c.organization.retrieve(), (err) => err instanceof RunwayML.AuthenticationError);
  });
});

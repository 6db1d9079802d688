// Runway's official client, @runwayml/sdk, against genform's Runway
// simulator: textToImage, imageToVideo, textToVideo and videoToVideo
// (gen4, Veo 3.1, gpt_image_2, seedance2, happyhorse_1_0, aleph2), each
// followed by the client's own waitForTaskOutput; tasks.retrieve and tasks.delete
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
// own declarations (resources/<endpoint>.d.ts: one interface a model),
// each with the least request its type allows: the fields it requires,
// ratio at the first value its type lists when it has a ratio.
function clientModels(resource) {
  const dir = dirname(createRequire(import.meta.url).resolve('@runwayml/sdk'));
  const src = readFileSync(join(dir, 'resources', resource + '.d.ts'), 'utf8');
  // Each interface up to the next: the model's own fields, not those of
  // the interfaces nested in its namespace.
  return src.split(/^\s*(?:export )?interface /m).flatMap((block) => {
    const m = block.match(/^\s+model: '([^']+)';$/m);
    if (!m) return [];
    const ratio = block.match(/^\s+ratio\??:\s*\|?\s*'([^']+)'/m);
    const required = (name) => new RegExp(`^\\s+${name}: `, 'm').test(block);
    return [{ model: m[1], ratio: ratio && ratio[1], required }];
  });
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

  test('textToImage with gpt_image_2 and outputCount, waitForTaskOutput: each picture, downloaded', async () => {
    const task = await client(s.key).textToImage
      .create({ model: 'gpt_image_2', promptText: 'a lighthouse at dusk', ratio: '1920:1088', outputCount: 2, quality: 'low' })
      .waitForTaskOutput();
    assert.equal(task.status, 'SUCCEEDED');
    assert.equal(task.output.length, 2);
    for (const url of task.output) assertImage(await download(s.fetch, url));
  });

  test('textToVideo with seedance2 at a 1080p ratio, waitForTaskOutput: a video, downloaded', async () => {
    const c = client(s.key);
    const task = await c.textToVideo
      .create({ model: 'seedance2', promptText: 'waves on a beach', ratio: '1920:1080', duration: 6, seed: 9 })
      .waitForTaskOutput();
    assert.equal(task.status, 'SUCCEEDED');
    assertVideo(await download(s.fetch, task.output[0]));
    const again = await c.tasks.retrieve(task.id);
    assert.equal(again.status, 'SUCCEEDED');
    assert.equal(again.output.length, 1);
  });

  test('imageToVideo with happyhorse_1_0 at a resolution, no ratio: a video, downloaded', async () => {
    const task = await client(s.key).imageToVideo
      .create({ model: 'happyhorse_1_0', promptImage: onePixelDataURI, promptText: 'the boats rock', resolution: '1080p', duration: 5 })
      .waitForTaskOutput();
    assertVideo(await download(s.fetch, task.output[0]));
  });

  test('videoToVideo with aleph2, waitForTaskOutput: a video', async () => {
    const task = await client(s.key).videoToVideo
      .create({ model: 'aleph2', videoUri: 'https://example.com/in.mp4', promptText: 'make it snow' })
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
    const video = 'https://example.com/in.mp4';
    const endpoints = [
      ['text-to-image', (body) => c.textToImage.create(body)],
      ['image-to-video', (body) => c.imageToVideo.create({ ...body, promptImage: onePixelDataURI })],
      ['text-to-video', (body) => c.textToVideo.create(body)],
      ['video-to-video', (body) => c.videoToVideo.create(body)],
    ];
    const refused = [];
    for (const [resource, create] of endpoints) {
      const models = clientModels(resource);
      assert.ok(models.length > 0, `the client lists models for ${resource}`);
      for (const { model, ratio, required } of models) {
        const body = { model, promptText: 'a cat' };
        if (ratio) body.ratio = ratio;
        if (required('duration')) body.duration = 5;
        if (required('referenceImages')) body.referenceImages = [{ uri: onePixelDataURI }];
        if (required('videoUri')) body.videoUri = video;
        if (required('promptVideo')) body.promptVideo = video;
        try {
          assert.ok((await create(body)).id);
        } catch (err) {
          refused.push(`${resource} ${model}: ${err.message}`);
        }
      }
    }
    assert.deepEqual(refused, [], 'the simulator refuses models the client lists');
  });

  test('a model the client lists only at other ratios is refused with the ratios it takes', async () => {
    await assert.rejects(
      client(s.key).textToImage.create({ model: 'gpt_image_2', promptText: 'a cat', ratio: '1280:720' }),
      (err) => err instanceof RunwayML.BadRequestError && /1920:1088/.test(err.message),
    );
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

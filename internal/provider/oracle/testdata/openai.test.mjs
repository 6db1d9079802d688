// OpenAI's official client, openai, against genform's OpenAI simulator:
// images.generate with b64_json answers (the GPT image models answer the
// images inline), in PNG and JPEG; images.edit where the simulator serves
// /v1/images/edits; models.list and models.retrieve (what genform checks
// a key with); the refusals genform reads (moderation, an account out of
// credit, an unknown parameter) and a wrong key, each as the client's
// documented error class.
//
// The client is pointed at the simulator with its baseURL option;
// maxRetries 0, so that each refusal is seen as it is answered.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI, { toFile } from 'openai';
import { sim, probe, assertImage, onePixelPNG } from './oracle.mjs';

const s = sim();

function client(apiKey) {
  return new OpenAI({ apiKey, baseURL: s.url + '/v1', fetch: s.fetch, maxRetries: 0 });
}

const MODEL = 'gpt-image-2';

function decoded(img) {
  assert.equal(typeof img.b64_json, 'string', 'each image comes inline as b64_json');
  const f = probe(Buffer.from(img.b64_json, 'base64'));
  return { ...f, type: 'image/' + f.format };
}

test('images.generate: two PNG pictures, inline, of the size asked', async () => {
  const res = await client(s.key).images.generate({ model: MODEL, prompt: 'a lighthouse at dusk', n: 2, size: '1536x1024', quality: 'low' });
  assert.equal(res.data.length, 2);
  for (const img of res.data) assertImage(decoded(img), 1536, 1024);
  assert.equal(res.size, '1536x1024');
  assert.equal(res.output_format, 'png');
  assert.equal(typeof res.created, 'number');
  assert.ok(res.usage && res.usage.total_tokens === res.usage.input_tokens + res.usage.output_tokens, `usage ${JSON.stringify(res.usage)}`);
  assert.equal(typeof res.usage.input_tokens_details.text_tokens, 'number');
});

test('images.generate: JPEG, with the size left to the model', async () => {
  const res = await client(s.key).images.generate({ model: MODEL, prompt: 'a red door', output_format: 'jpeg', output_compression: 80, size: 'auto', quality: 'auto', background: 'auto', moderation: 'auto' });
  assert.equal(res.data.length, 1);
  const f = decoded(res.data[0]);
  assert.equal(f.format, 'jpeg');
  assertImage(f);
});

test('images.edit, where the simulator serves /v1/images/edits', async (t) => {
  const probeRes = await s.fetch(s.url + '/v1/images/edits', { method: 'POST', headers: { Authorization: 'Bearer ' + s.key } });
  if (probeRes.status === 404) {
    t.skip('the OpenAI simulator does not serve POST /v1/images/edits yet');
    return;
  }
  const image = await toFile(onePixelPNG, 'in.png', { type: 'image/png' });
  const res = await client(s.key).images.edit({ model: MODEL, image, prompt: 'the same, at night', size: '1024x1024' });
  assert.ok(res.data.length >= 1);
  assertImage(decoded(res.data[0]));
});

test('models.list and models.retrieve: how genform checks a key', async () => {
  const c = client(s.key);
  const ids = [];
  for await (const m of c.models.list()) ids.push(m.id);
  assert.ok(ids.includes(MODEL), `the models list ${MODEL}: ${ids}`);
  const m = await c.models.retrieve(MODEL);
  assert.equal(m.id, MODEL);
  await assert.rejects(c.models.retrieve('no-such-model'), (err) => err instanceof OpenAI.NotFoundError && err.code === 'model_not_found');
});

test('moderation: BadRequestError moderation_blocked', async () => {
  await assert.rejects(client(s.key).images.generate({ model: MODEL, prompt: 'a cat [nsfw]' }),
    (err) => err instanceof OpenAI.BadRequestError && err.code === 'moderation_blocked');
});

test('an account out of credit: RateLimitError insufficient_quota', async () => {
  await assert.rejects(client(s.key).images.generate({ model: MODEL, prompt: 'a cat [quota]' }),
    (err) => err instanceof OpenAI.RateLimitError && err.code === 'insufficient_quota');
});

test('a failure after the work: InternalServerError', async () => {
  await assert.rejects(client(s.key).images.generate({ model: MODEL, prompt: 'a cat [fail]' }),
    (err) => err instanceof OpenAI.InternalServerError);
});

test('a parameter the GPT image models do not take: BadRequestError naming it', async () => {
  await assert.rejects(client(s.key).images.generate({ model: MODEL, prompt: 'a cat', response_format: 'url' }),
    (err) => err instanceof OpenAI.BadRequestError && err.param === 'response_format');
});

test('a wrong key: AuthenticationError, nothing made', async () => {
  const c = client(s.wrongKey);
  const before = await s.jobs();
  await assert.rejects(c.images.generate({ model: MODEL, prompt: 'a cat' }),
    (err) => err instanceof OpenAI.AuthenticationError && err.status === 401 && err.code === 'invalid_api_key');
  assert.equal(await s.jobs(), before, 'a refused key made a generation');
  await assert.rejects(c.models.list(), (err) => err instanceof OpenAI.AuthenticationError);
});

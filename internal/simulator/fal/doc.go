// Package fal simulates fal's queue API (queue.fal.run) as fal's
// reference documents it, at the root of the server, for genform's tests
// and `genform sim -provider fal`. It accepts any model id and makes real
// PNG pictures, or animated GIF videos for a model whose id names video
// or Veo (fal-ai/veo3.1 and its variants).
//
//	POST /{model_id}                          submit: the body is the model's input
//	GET  /{owner}/{alias}/requests/{id}/status  IN_QUEUE (202), IN_PROGRESS (202), COMPLETED (200)
//	GET  /{owner}/{alias}/requests/{id}         the result: {"images":[...]} or {"video":{...}}
//	PUT  /{owner}/{alias}/requests/{id}/cancel  CANCELLATION_REQUESTED, ALREADY_COMPLETED, NOT_FOUND
//	GET  /files/{id}/{n}.{png,gif}            the outputs (no key, like fal's CDN)
//	GET  /v1/models/pricing?endpoint_id=…     the Platform API's prices (the key's check)
//	GET  /_sim/jobs                           the jobs report (no key)
//
// Every API request needs "Authorization: Key <key>"; an answer about a
// request names it in X-Fal-Request-Id, where fal's client reads a
// result's request id. The submit answer
// names the status, response and cancel URLs, built as fal builds them:
// from the model id's first two segments (a subpath such as /dev is used
// to submit, not to follow). A job waits IN_QUEUE (with its
// queue_position) while the key has MaxConcurrent jobs in progress: fal
// queues past its concurrency limit, it never refuses. Errors are fal's
// two shapes: {"detail": "..."} with an error_type (request errors, and
// the X-Fal-Error-Type header) or {"detail": [{"loc","msg","type",...}]}
// (model errors, 422).
//
// A prompt containing "[fail]" (or a job FailRate picks) completes with
// an error in its status and a 500 runner_server_error as its result.
// "[nsfw]" on a FLUX model (an id with a segment "flux") completes without
// an error, as FLUX's safety checker does: its result flags every image in
// has_nsfw_concepts and its images are black; on any other model it
// completes with a 422 content_policy_violation result. "[quota]" is
// answered at the submit with 403 "User is locked. Reason: Exhausted
// balance. …" (an account out of credit); a model id with the segment
// "no-such-model" with 404, and a FLUX image_size that is no preset with
// a 422 model error: none makes a request. "[weird-status]" reports
// IN_RETRY, a status fal does not document, for the middle of its run.
// Output files answer 404 from URLTTL (default 7 days, fal's CDN minimum)
// after the job completed. The faults and limits are simkit's (Options);
// LoseRate drops the answer of a submit whose request was queued.
//
// It does not own the client (package provider/fal) and never imports
// package service.
package fal

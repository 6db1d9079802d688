// Package openai is OpenAI's Images API (POST /v1/images/generations)
// behind the provider seam: a request's target is a GPT image model, its
// body the generation's parameters, to which Submit adds the model. A
// body with an image (source_image, source_images) is an edit, POST
// /v1/images/edits, sent as a multipart form whose images are files, as
// OpenAI's clients send them: each read before anything is sent, a data:
// URI decoded, an http(s) URL downloaded (see editForm).
//
// The API is synchronous and keeps no job: its answer is the images,
// base64-encoded inline (data[].b64_json), with created and usage
// (tokens). So Submit sends the request once and waits for the answer
// for as long as the caller's context allows (the generation's timeout:
// a high quality image can take minutes), then holds the images in
// memory under an id it makes ("img-" + created + a hash of the answer)
// for Status (done) and Result, whose outputs carry their bytes and media
// type (Output.Data) and no URL; the result's detail is the answer
// without its base64 payloads, so that the state stays small, and its
// usage the answer's usage. The answer names no model snapshot (no field,
// and no documented header), so the result has no version. The job's
// handle records what the answer was, never the images.
//
// A request the safety system refuses (400 moderation_blocked, or a
// content policy code) made nothing: Submit returns a job that ended
// refused, in OpenAI's words, so that it is recorded as refused and never
// sent again. Any other 400, and 401, 403 and 404, are refusals that made
// nothing; only a 401 refuses the key (a 403 to a create is a model the
// organisation must be verified for, and fails that instance alone); a 429 is sent again after its wait, unless it is
// insufficient_quota (credits or budget spent), which is
// provider.ErrCapReached. Everything else, a 5xx or an answer lost or
// unreadable after the request left, is possibly paid and never sent
// again: the Images API has nothing to list, so a lost answer cannot be
// found again (no provider.Recoverer), and its images are lost.
//
// A job this process does not hold (an apply stopped after the answer and
// before its files were written) cannot be fetched: OpenAI keeps no copy.
// Its status says so: failed, with the reason that the images were paid
// for and are lost; its result is an error. A refused job's handle keeps
// its refusal. CheckCredentials lists the models (GET /v1/models).
//
// Sources: the Images API reference as generated into openai-python
// (api_reference/openapi.transformed.yml: createImage, CreateImageRequest,
// ImagesResponse, ImageGenUsage, ErrorResponse; src/openai/types/
// image_generate_params.py, images_response.py, image.py,
// image_model.py); the client's status errors
// (src/openai/_client.py _make_status_error, _exceptions.py), retries
// (_base_client.py _should_retry: 408, 409, 429, 5xx; _constants.py: two
// retries, no idempotency header for this API); OpenAI's error codes guide
// and help article (401, 403, 429 rate limit and quota, 500, 503); the
// model pages (snapshots, rate limits in images a minute by tier).
//
// The HTTP client is package service's; this package adapts it and owns
// only the images it holds until they are handed over.
package openai

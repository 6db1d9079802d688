// Package openai simulates OpenAI's Images API as its reference describes
// it (createImage, and the models a key can use), at the root of the
// server, for genform's tests and `genform sim -provider openai`. It makes
// real PNG (or JPEG) pictures for any GPT image model and answers them
// inline, base64-encoded, as the GPT image models do.
//
//	POST /v1/images/generations  synchronous: the answer is the images
//	POST /v1/images/edits        the same, starting from images (multipart)
//	GET  /v1/models              the models the key can use, each with its shutdown_date
//	GET  /v1/models/{model}      one of them, or 404 model_not_found
//	GET  /_sim/jobs              the jobs report (no key)
//
// Every API request needs "Authorization: Bearer <key>". A generation is
// answered once its work is done (Latency after it arrived, behind
// MaxConcurrent when set): {"created", "data": [{"b64_json"}], "size",
// "quality", "background", "output_format", "usage": {"input_tokens",
// "output_tokens", "total_tokens", "input_tokens_details",
// "output_tokens_details"}}. The request is checked as the reference
// documents it: prompt (at most 32000 characters), model, n (1 to 10),
// size (1024x1024, 1536x1024, 1024x1536 or auto; for the gpt-image-2
// models any WIDTHxHEIGHT whose sides are multiples of 16, at most 3840,
// within 1:3 and 3:1 and 3840x2160 pixels), quality, background,
// output_format, output_compression, moderation; response_format and
// style, which the GPT image models do not take, and parameters the
// reference does not list are refused. An edit is a multipart/form-data
// form (createImageEdit): its images as files, one "image" or repeated
// "image[]" (1 to 16, each a PNG, JPEG or WebP of less than 50 MB), an
// optional PNG mask of the first image's size, and its parameters as text
// fields (those of a generation but moderation and style, with
// input_fidelity), checked alike; its job keeps the form as JSON, each
// file by its sha256, and its images are made as a generation's (the
// simulator reads at most 64 MiB of form). Errors are OpenAI's shape,
// {"error": {"message", "type", "param", "code"}}; every 429 has
// Retry-After.
//
// The job each generation makes is counted in the report from the moment
// its work starts, as a request OpenAI may charge. A prompt containing
// "[nsfw]" is refused at once, before any work, with 400 and code
// moderation_blocked (the answer OpenAI's safety system gives); "[quota]"
// with 429 and code insufficient_quota (an account out of credit);
// "[forbidden]" with 403 "Your organization must be verified to use the
// model …" (a model the organisation may not use yet, not the key); none
// makes a job. "[fail]" (or a job FailRate picks) does the work and then
// answers 500 server_error, as a server that fails after generating
// would: the job counts. LoseRate closes the connection of a generation
// whose work was done, without an answer. "[weird-status]" changes
// nothing: the API has no statuses. The other faults and limits are
// simkit's (Options); OpenAI documents no request rate for its image
// models (it limits images and tokens a minute), so RPM is none unless
// Options.RPM sets one, and no concurrency limit.
//
// Choices the reference leaves open are the simulator's own: model is
// required (the API's default, dall-e-2, is not simulated); a model is
// served when its name starts with gpt-image- or chatgpt-image-, but for
// the models OpenAI has shut down, from their shutdown day (UTC) by the
// simulator's clock: gpt-image-1 (2026-10-23), gpt-image-1.5 and its
// snapshot, gpt-image-1-mini and chatgpt-image-latest (2026-12-01), which
// are answered 404 model_not_found like any model it does not serve,
// making nothing; GET /v1/models lists each model with its shutdown_date
// (null when none is announced), as the deprecations page says OpenAI's
// does; size auto is 1024x1024, quality auto
// is medium; webp and stream are refused (Go has no webp encoder, and
// the answer is never streamed); a transparent background makes the top
// band of sky transparent; usage counts a token for four characters of
// prompt, and output tokens that grow with the pixels and the quality.
//
// It does not own the client (package provider/openai) and never imports
// package service.
package openai

// Package lumaagents simulates Luma's Agents API (the API of Luma's
// current models: uni-1 and uni-1-max for images, ray-3.2 for video) as
// its reference describes it (docs.agents.lumalabs.ai: the API
// reference, Models, Error handling, Rate limits; the official clients
// luma-agents-typescript and luma-agents-python, src/resources/
// generations), at the root of the server, for genform's tests and
// `genform sim -provider luma_agents`. It makes real PNG pictures for the
// image models and animated GIF videos for the video model.
//
//	POST /generations        {"model": "uni-1"|"uni-1-max"|"ray-3.2", "type", "prompt",
//	                          "aspect_ratio", "image_ref", "source", "output_format",
//	                          "style", "web_search", "user_id", "video": {...}}
//	GET  /generations/{id}   the generation
//	GET  /files/{id}/0.{png,gif}  the output (no key)
//	GET  /_sim/jobs          the jobs report (no key)
//
// Every API request needs "Authorization: Bearer <key>"; a refused key
// is answered 401 {"detail": "Invalid or missing API key ..."}. Every
// answer carries X-API-Version. A create is answered 201 with the
// generation, state "queued"; it stays "queued" while the key has
// MaxConcurrent generations running and for the first tenth of its run,
// then is "processing", then "completed" with output [{"type", "url"}].
// The model defaults to uni-1 and the type to image, as the reference's
// examples leave them out.
//
// A body the reference's schema refuses (a missing or over-long prompt,
// an unknown model, type, aspect ratio, duration, resolution or output
// format, a media reference without exactly one of url, data and
// generation_id) is answered 400 {"detail"}; a combination the reference
// rules out (a type the model does not make, an image model given video
// options, an aspect ratio ray-3.2 does not make, image_edit without a
// source, more reference images than the type takes, loop with a
// 10-second video or with HDR, HDR at 540p, a 10-second video from key
// frames, a generation_id that is not a completed generation of the same
// key) 422 {"detail"}, the status the error reference gives
// "Parameter combination rejected". None of them makes a generation.
//
// A prompt containing "[fail]" (or a generation FailRate picks) ends
// "failed" with failure_code "generation_failed"; "[nsfw]" ends "failed"
// with failure_code "content_moderated"; "[quota]" is answered 402
// "Insufficient balance…" at the create, making nothing (the error
// reference's 402); "[weird-status]" reports "running", a state Luma does
// not document, for the middle of its run. The words of the failure
// reasons and error details are the simulator's own: the reference gives
// the codes and statuses, not the messages. The faults and limits are
// simkit's (Options). The output URLs are presigned for an hour, as the
// reference says: the files answer 404 URLTTL (default an hour) after the
// generation finished, while the generation still names them.
//
// It does not own the client (package provider/lumaagents) and never
// imports package service.
package lumaagents

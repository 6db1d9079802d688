// Package luma simulates Luma's Dream Machine API as its reference
// (the OpenAPI document of lumalabs/lumaai-api, the official clients
// lumaai-python and lumaai-node, and docs.lumalabs.ai's Errors and Rate
// Limits pages) describes it, at the root of the server, for genform's
// tests and `genform sim -provider luma`. It makes real PNG pictures for
// the image models and animated GIF videos for the video models.
//
//	POST   /generations/image   {"model": "photon-1"|"photon-flash-1", "prompt", "aspect_ratio", ...}
//	POST   /generations/video   {"model": "ray-2"|"ray-flash-2", "prompt", "aspect_ratio",
//	                             "duration": "5s"|"9s", "resolution", "loop",
//	                             "keyframes": {"frame0", "frame1"}}
//	GET    /generations/{id}    the generation
//	DELETE /generations/{id}    remove it (204)
//	GET    /generations         newest first; limit (default 100) and offset
//	GET    /credits             {"credit_balance"} in US cents
//	GET    /ping                {"message": "pong"}
//	GET    /files/{id}/0.{png,gif}  the output (no key)
//	GET    /_sim/jobs           the jobs report (no key)
//
// Every API request needs "Authorization: Bearer <key>"; a refused key
// is answered 401 {"detail": "Invalid API key is provided ..."}. A
// create is answered 201 with the generation, state "queued"; it stays
// "queued" while the key has MaxConcurrent generations running and for
// the first tenth of its run, then is "dreaming", then "completed" with assets.image or assets.video. The
// generation echoes its request (with generation_type filled in) and
// its created_at. A body the schema refuses (no model, a model the
// endpoint does not list, an aspect ratio outside the seven) is answered
// 422 with a list of validation errors; the documented create errors
// (a missing, too short or too long prompt, loop with an end frame or
// two key frames, no key frame in keyframes) 400 {"detail"}, as are a
// duration or resolution outside the reference's lists, an image key
// frame that is not an http(s) URL, and a generation key frame that does
// not name a completed generation of the same key: those three are the
// simulator's reading where the reference leaves the answer open. None
// of them makes a generation.
//
// A prompt containing "[fail]" (or a generation FailRate picks) ends
// "failed" with the failure_reason "Prompt processing failed"; "[nsfw]"
// ends "failed" with "Advanced prompt moderation failed", one of the
// moderation reasons of Luma's error reference; "[quota]" is answered 402
// "Insufficient credits…" at the create, making nothing (an account whose
// credits do not cover the generation); "[weird-status]" reports
// "processing", a state Luma does not document, for the middle of its
// run. The faults and limits are simkit's (Options). Luma names no
// lifetime for its asset URLs: the files answer 404 URLTTL (default a
// day) after the generation finished, while the generation still names
// them. Deleting a generation is kept in memory only; after a restart
// on the same DataDir it is listed again.
//
// It does not own the client (package provider/luma) and never imports
// package service.
package luma

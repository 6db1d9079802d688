// Package replicate simulates Replicate's predictions API as Replicate's
// HTTP API reference documents it, at the root of the server, for
// genform's tests and `genform sim -provider replicate`. It accepts any
// model and makes real PNG pictures, or an animated GIF video for a model
// whose name says video.
//
//	POST /v1/predictions                        {"version": "owner/name[:hash]" or hash, "input"}
//	POST /v1/models/{owner}/{name}/predictions  {"input"}: an official model
//	GET  /v1/predictions/{id}                   the prediction
//	POST /v1/predictions/{id}/cancel            cancel it
//	GET  /v1/predictions                        newest first, 100 a page, "next" URL;
//	                                            created_after and created_before filter
//	GET  /v1/account                            the key's account
//	GET  /files/{id}/{n}.{png,gif}              the outputs (no key)
//	GET  /_sim/jobs                             the jobs report (no key)
//
// Every API request needs "Authorization: Bearer <key>". A create is
// answered 201 with the prediction, status "starting"; it is "starting"
// while the key has MaxConcurrent predictions running (Replicate queues,
// it does not refuse), then "processing", then "succeeded" with output
// a list of URLs (images) or one URL (a video), metrics.predict_time and
// total_time. A Cancel-After header (a duration: "90s", "5m", "1h", or
// seconds) sets the prediction's deadline: reached before it started it
// ends "aborted", while it runs "canceled". Prefer: wait is accepted and
// not waited on. Errors are problem details, {"title", "detail",
// "status"}; every 429 has Retry-After.
//
// A prompt containing "[fail]" (or a prediction FailRate picks) ends
// "failed" with an error string; "[nsfw]" ends "failed" with the error a
// safety checker gives ("... NSFW content ..."); "[quota]" is answered 402
// "Billing required" and "[forbidden]" 403 (a model the account may not
// run), both at the create, making nothing; "[weird-status]"
// reports "paused", a status Replicate does not document, for the middle
// of its run. URLTTL (default 1 hour) after a prediction finished, its
// input and output are removed (data_removed true, output null) and its
// files answer 404, as Replicate deletes API predictions' data after an
// hour. The faults and limits are simkit's (Options); RPM defaults to
// Replicate's 600 creates a minute, and counts every API request.
//
// It does not own the client (package provider/replicate) and never
// imports package service.
package replicate

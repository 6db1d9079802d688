// Package runway simulates Runway's API (api.dev.runwayml.com) as its API
// reference and its official clients (runwayml/sdk-node, sdk-python)
// describe it, at the root of the server, for genform's tests and
// `genform sim -provider runway`. It makes real PNG pictures, and an
// animated GIF for a video.
//
//	POST   /v1/text_to_image   {model, promptText, ratio, seed, referenceImages}
//	POST   /v1/image_to_video  {model, promptImage, promptText, ratio, duration, seed}
//	POST   /v1/text_to_video   {model, promptText, ratio, duration, seed}
//	POST   /v1/video_to_video  {model, videoUri or promptVideo, promptText, ...}
//	GET    /v1/tasks/{id}      the task
//	DELETE /v1/tasks/{id}      cancel a task not yet ended; delete one that has
//	GET    /v1/organization    the key's tier and credit balance (usage left out)
//	GET    /files/{id}/{n}.{png,gif}?exp=..&sig=..  an output (no key)
//	GET    /_sim/jobs          the jobs report (no key)
//
// Every API request needs "Authorization: Bearer <key>" and the header
// X-Runway-Version: 2024-11-06 (a request without it, or with another
// version, is answered 400). A create is answered 200 with {"id",
// "estimatedCost"}; the task is then THROTTLED while the key has
// MaxConcurrent tasks running (Runway holds the tasks past its
// concurrency limit, it does not refuse them), PENDING, RUNNING with a
// progress, and SUCCEEDED with output, a list of URLs. A task not yet
// ended carries estimatedCost, one that ended its cost ({"credits"}: the
// simulator's own prices, 5 credits an image or a second of video; 0 for
// a task that failed or was cancelled, refunded). Errors are
// {"error": "..."}. The models each endpoint takes are those the
// official Node client lists for it (veo3 is no longer among them), and
// each model is held to its own request type there (models.go): the
// fields it requires and may take (any other is refused), the values its
// type lists for ratio, duration and its other string fields, and the
// lengths the client's descriptions name; promptImage is an HTTPS URL, a
// data URI, or a list of {uri, position: first|last} (or, for the models
// that take reference images there, of {uri}).
//
// Each GET of a task hands out fresh output URLs, signed and valid for
// URLTTL (default 24 hours, the short end of the 24 to 48 hours the
// reference gives); past it the link answers 403, and fetching the task
// again gives a working one, as Runway's do. The files themselves are
// kept. A canceled task reports CANCELLED; a task deleted after it ended
// answers 404.
//
// DailyCap (default 25,000, the top tier's fewest daily generations of a
// model) bounds the tasks one key creates of one model in any 24 hours:
// past it, a create is answered 429 with the message Runway sends when an
// account's daily task limit is reached, and makes nothing. MaxConcurrent
// defaults to the top tier's 20; Runway documents no request rate, so RPM
// is unlimited unless set.
//
// A prompt containing "[fail]" (or a task FailRate picks) ends FAILED
// with failureCode INTERNAL.BAD_OUTPUT.CODE01; "[nsfw]" ends FAILED with
// a SAFETY.INPUT.TEXT failure code, Runway's moderation; "[quota]" is
// answered 400 "You do not have enough credits to run this task." at the
// create, making nothing (an organization whose credits are spent, its
// monthly spend limit reached); "[weird-status]"
// reports PREPARING, a status Runway does not document, for the middle
// of its run. The other faults are simkit's (Options).
//
// It does not own the client (package provider/runway) and never imports
// package service.
package runway

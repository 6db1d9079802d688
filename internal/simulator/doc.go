// Package simulator is an http.Handler that implements the generation
// service described in docs/service.md (images and videos, generated
// asynchronously) with synthetic but real outputs. genform starts it in-process when no base_url
// is configured, `genform sim` runs it standalone, and genform's tests run
// against it.
//
// It owns the service's API alone: its paths and route table (routes.go),
// the request fields and their validation (request.go), the statuses and
// their lifecycle and the format of its job files (jobs.go), its error
// bodies and codes (errors.go), the creation detail and watermark-free
// URLs (server.go), and what its media files show (media.go). Everything
// else comes from package simulator/simkit, in whose frame (simkit.Server)
// it is built as the live providers' simulators (simulator/fal,
// replicate, openai, runway, luma, lumaagents) are: the gate every API request passes
// (token, request rate, injected errors), the jobs with their creates per
// fingerprint, the concurrency limit (refusing here, where the live
// providers queue), lost answers, the data directory, URL signing, the
// rendering, the media cache and its cut-short downloads, the /_sim/jobs
// report, the request log, and serving on an address or a listener
// (Listen, Serve). It does not own the client: it never imports package
// service, so a client test that passes against it proves the client speaks
// the documented interface rather than the simulator's quirks. Where the
// service's interface is silent, it follows what the service published
// elsewhere, and where that is silent too, the choices are written down
// here and marked [simulator] in docs/service.md.
//
// # Endpoints
//
// All under /v1, all requiring "Authorization: Bearer <token>" (the route
// table is in routes.go):
//
//	POST /v1/jobs/text2image          -> {"generation_id": ID}
//	POST /v1/jobs/gen2/image2video    -> {"generation_id": ID}
//	POST /v1/jobs/gen2/afc            -> {"generation_id": ID}
//	POST /v1/jobs/gen2/text2video     -> {"generation_id": ID}
//	GET  /v1/jobs/{id}/status         -> {"status", "progress"}
//	GET  /v1/creation/{id}            -> creation detail
//	POST /v1/creation/{id}/watermark-free-url -> {"url", "expire_time"}
//
// A success is {"status":"success","value":{...}}. The generation_id is
// also the creation_id of the other endpoints: a random UUID, so ids never
// collide across restarts. Creates need Content-Type: application/json.
//
// Validation (400 unless noted). The allowed values and limits are the
// service's rules, package rules (service/rules): the one table genform's
// configuration checks too, so the reasons below are worded once, there.
// Unknown fields are ignored; null counts as absent; numbers must be whole
// where counts are meant (4.0 is 4).
//
//   - prompt: required, non-blank, for text2image and text2video; optional
//     for the others. prompt and negative_prompt: at most 2048 characters
//     (runes), the limit the simulator picks for the "usage policy".
//     A prompt containing "[policy]" is refused with code "VB-100017"
//     (may violate the usage policy), to simulate policy refusals.
//   - is_public, is_enable_prompt_enhancer: booleans (default true).
//   - settings.seed: -1 (default, random) or 0..4294967295. A random seed
//     is picked from the job id, fixed for that job, and reported in
//     /_sim/jobs.
//   - text2image: config.image_number 1..4 (default 4);
//     settings.aspect_ratio "21:9", "16:9", "9:16", "3:4", "4:3", "1:1"
//     (default "16:9"); settings.resolution 720 or 1080 (default 720).
//   - videos: settings.duration 2, 4, 6 or 8 seconds (default 4).
//   - image2video: config.source_image required, an http(s) URL or a
//     data:image/<type>;base64,<data> URI whose data decodes; gen_mode
//     "smooth" (default) or "enhanced". URLs are never fetched. A source
//     image is at most 10 MiB of text (six fit in the 64 MiB body), and a
//     URL is printable ASCII, with spaces, quotes and backslashes
//     percent-encoded.
//   - afc: config.source_images, 2 to 6 such images; config.frame_indices,
//     as many whole numbers, strictly increasing, each from 0 to
//     duration*8-1 (0..31 for 4 s: positions at 8 frames a second);
//     config.input_width and input_height, optional pixel sizes 1..8192.
//   - text2video: gen_mode "standard" (default), "smooth" or "enhanced";
//     settings.aspect_ratio as for images.
//
// # Errors
//
// Both documented shapes are used, so a client must read both. The code's
// type decides the shape:
//
//	flat, integer code:   {"message": "...", "code": 400011, "details": []}
//	nested, string code:  {"error": {"message": "...", "code": "H-10002003", "details": []}}
//
// Flat (all 400): 400001 body not a JSON object or too large (64 MiB);
// 400003 wrong Content-Type; 400010 required field missing; 400011 field of
// the wrong type or value; 400012 prompt too long; 400020 watermark-free
// URL asked for an image; 400021 watermark-free URL asked before the video
// succeeded (or for a failed one).
//
// Nested: 400 "VB-100017" policy refusal; 401 "H-10001001" token missing
// or wrong (the code is the simulator's own; the service documented none),
// with WWW-Authenticate; 403 "H-10002002" watermark-free URL expired or not
// validly signed; 404 "H-10002003" unknown id, or another token's job;
// 404 "H-10002001" unknown path or media file (a path with an empty, "."
// or ".." segment names nothing and is never redirected); 405 "H-10002001"
// wrong method on a path a route takes, with Allow listing the methods the
// routes name (the API's GET endpoints refuse HEAD); 429 "VB-100011" too many unfinished jobs; 429
// "VB-100012" too many requests per minute; 500 "H-10005001" injected
// service error (the simulator's own code). Every 429 carries Retry-After
// in whole seconds.
//
// # Lifecycle
//
// A job's status is computed from its creation time and latency (both
// fixed at creation), so it needs no background work and carries on across
// restarts:
//
//	pending          first 10% of the latency, progress 0
//	processing       until 85%, progress rising from 0 to 1 (4 decimals)
//	post_processing  last 15%, progress 1
//	succeed          from then on, progress 1
//
// A job fails instead of succeeding, at the same moment and with progress
// 1, when its prompt contains "[fail]" or when FailRate picks it. The pick
// hashes Seed, the request fingerprint and how many creates of that
// fingerprint came before, so it is repeatable whatever order concurrent
// requests arrive in, and a resubmission gets a fresh draw.
//
// The creation detail can be fetched at any time. Before succeed (and when
// failed) it carries the current status, video_url and thumbnail_url "",
// and outputs []. On succeed: images have one output per image; videos have
// video_url and one output with the same media_url. type is the endpoint
// (text2image, image2video, afc, text2video); input_type is text, image or
// keyframes; output_type is image or video; create_time and update_time
// (when the current status began) are RFC 3339 in UTC; settings holds the
// output's width and height and, for videos, fps 8 (0 for images); commits
// are all zero; user_id, username and avatar derive from the token's hash.
//
// # Limits
//
// Limits are per token (any distinct token is a user of its own when no
// Token is configured). MaxConcurrent (default 40) counts the token's jobs
// not yet finished; a create past it gets 429 VB-100011 with Retry-After
// until the earliest of them finishes. RPM (default 500) counts API
// requests in a sliding 60-second window; past it, 429 VB-100012 with
// Retry-After until the oldest leaves the window. Requests this limit
// refuses, 401 answers, media downloads and /_sim/jobs do not count
// against it. The order is: authenticate, RPM, injected error, endpoint.
//
// # Faults
//
// ErrorRate answers that fraction of authenticated, admitted API requests
// 500 before anything else happens: a create answered 500 made no job,
// though a client cannot know it (ReadErrorsOnly spares the creates).
// LoseRate makes that fraction of creates make their job, count it, and
// then close the connection without an answer, as a create whose answer
// was lost. TruncateRate makes that fraction of media downloads (GET without Range)
// send the full Content-Length, then half the bytes, then close the
// connection, so the client reads an unexpected EOF. Both draw from math/rand
// sources seeded with Seed, under a mutex: the same sequence of requests
// sees the same faults.
//
// # Media
//
// Media URLs are absolute, built from the request's scheme and Host
// (http://<Host>/media/<id>/...), need no token, and exist once the job has
// succeeded (404 before). Every file is rendered on demand from a hash of
// what was asked (prompt, negative prompt, seed, image index, inputs), so
// the same request with the same seed gives the same bytes, and kept in a
// 256 MiB in-memory LRU cache.
//
// Images are PNGs (image/png) at the requested aspect ratio with the
// resolution as the short side: 16:9 at 720 is 1280x720, 9:16 at 1080 is
// 1080x1920, 21:9 at 720 is 1680x720, 4:3 at 720 is 960x720. The picture is
// a flat landscape (sky bands, sun, three ridges, shapes) whose colours and
// layout come from the hash, with the prompt written along the bottom.
// A 17-colour palette and png.BestSpeed keep rendering and encoding a
// 1280x720 image to a few milliseconds (BenchmarkRenderImage720). Thumbnails are 320 pixels on the
// long side.
//
// Videos are animated GIFs (image/gif): duration x 8 frames at 8 fps,
// 240 pixels on the short side, at the request's aspect ratio (text2video),
// the input_width:input_height proportion (afc, clamped to 1:3..3:1) or
// 16:9. The scene moves (more for 'smooth'), a timeline bar fills up, and
// afc key frames are marked on it. GIF because it is the one animated
// format Go encodes with the standard library alone, and every browser
// plays it, so genform's gallery shows simulated videos without a codec.
// The plain video carries a "SIMULATED" watermark box drawn with
// golang.org/x/image/font/basicfont; the watermark-free URL serves the same
// frames without it. That URL is signed (HMAC-SHA256 of id and expiry with
// a per-server key) and answers 403 from URLTTL (default 60m) after it was
// issued; expire_time is ISO 8601 UTC with a trailing Z.
//
// # Persistence
//
// With DataDir set, each job is one JSON file, DataDir/jobs/<id>.json,
// written through a synced temporary file and a rename before the create is
// answered, so a job whose id a client saw is never lost, even by a crash.
// The file's format is the service's own (jobFile, version 1), not
// simkit.Run's, so the data directories the built-in simulator left in
// working copies (.genform/simulator) load as they are.
// The URL signing key is DataDir/secret.key. New loads every job; status
// and detail request counters are written by Close. Tokens are never
// stored, only their sha256, which keeps job ownership across restarts.
// One DataDir serves one Server at a time.
//
// # /_sim/jobs
//
// GET /_sim/jobs (no token) serves a JobsReport as JSON:
//
//	{"jobs": [{"id", "endpoint", "body", "status", "progress", "created_at",
//	           "fingerprint", "seed", "status_requests", "detail_requests"}],
//	 "creates": {"<fingerprint>": N},
//	 "requests": N, "throttled": N}
//
// jobs lists every job, oldest first: endpoint is the create path (e.g.
// /v1/jobs/text2image), body the request body as received. creates counts
// accepted creates (jobs made) per fingerprint, so a count above 1 means
// the same request was generated twice. requests counts /v1 requests and
// throttled 429 answers since this Server started.
//
// The fingerprint is the lowercase hex sha256 of the endpoint path, a
// newline, and the canonical JSON of the body as received (no defaults
// filled in): objects with keys sorted, no whitespace, strings without HTML
// escaping, whole numbers below 1e21 written as integers (4, 4.0 and 4e0
// are all 4) and other numbers as the shortest form that round-trips
// through float64.
package simulator

// Package runway is Runway's task API (api.dev.runwayml.com) behind the
// provider seam: a request's target is a model ("gen4_image", "gen4.5"),
// its body the task's fields, which Submit sends with "model" set to the
// target to /v1/text_to_image (an image), /v1/video_to_video (a video
// with a source video, videoUri or promptVideo), /v1/image_to_video (a
// video with a promptImage) or /v1/text_to_video (a video without). The
// tables list every image and video model @runwayml/sdk 4.20.1 lists
// (table.go, models.go), each mapped only to the fields its own type has
// at its endpoint, and the prices read (prices.go). Every
// request carries X-Runway-Version: 2024-11-06 and the key as a Bearer
// token. The task's id is all that follows it: Status and Result read
// GET /v1/tasks/{id}. Status reads PENDING, THROTTLED (running, and
// Status.Throttled: held back by the account's concurrency limit),
// RUNNING with its progress, SUCCEEDED, FAILED with failure and
// failureCode (refused when the code begins SAFETY.), and CANCELLED,
// which ends the job as failed; any other status is shown and followed
// as running. Result fetches the task anew on every call and keeps no
// URL: Runway's output URLs expire within 24 to 48 hours, and a new GET
// of the task hands out fresh ones. CheckCredentials reads GET
// /v1/organization, which creates nothing.
//
// A create is sent again only after a 429 or a connection never opened
// (package service's rule), never on the timeouts, 408, 409 and 5xx the
// official clients re-send a POST on (they send no idempotency key), and
// never after a 429 that says the account's daily generations limit of
// the model is reached: that one ends the create at once with an error
// wrapping provider.ErrCapReached, in Runway's words; so does a create
// refused because the organization's credits are spent ("You do not have
// enough credits to run this task.", its monthly spend limit reached).
// Only a 401 refuses the key. 400, 401, 404 and
// 405 are refusals that made nothing (the reference's HTTP errors say
// not to retry them); anything else is possibly paid. Runway lists no
// tasks, so a lost create cannot be found again (no provider.Recoverer).
// The HTTP client is package service's; this package only adapts it,
// and owns no state.
//
// Sources, read for facts only:
//   - the API reference's HTTP errors page (docs.dev.runwayml.com/errors/errors):
//     which statuses may be retried; 400 carries {"error": "..."};
//   - its task failures page (docs.dev.runwayml.com/errors/task-failures):
//     SAFETY.* failure codes are moderation, not to be retried;
//   - its usage tiers page (docs.dev.runwayml.com/usage/tiers): tasks past
//     the concurrency limit are THROTTLED, not refused; no request rate;
//     a create past the daily generations limit is answered 429;
//   - its inputs page (docs.dev.runwayml.com/assets/inputs): assets are
//     HTTPS URLs or data URIs;
//   - runwayml/sdk-node: src/client.ts (base URL, Bearer auth,
//     X-Runway-Version 2024-11-06, the retry rule on POST, no idempotency
//     header), src/resources/tasks.ts (the statuses, progress, failure,
//     failureCode, output URLs that expire within 24 to 48 hours, DELETE
//     cancels or deletes), src/resources/text-to-image.ts,
//     image-to-video.ts, text-to-video.ts, video-to-video.ts (fields and
//     models per endpoint; 4.20.1, read 2026-12-07), src/resources/organization.ts (GET /v1/organization),
//     src/lib/polling.ts (the wait helper);
//   - runwayml/sdk-python: src/runwayml/_base_client.py (the same retry
//     rule), src/runwayml/lib/polling.py (its synchronous wait helper
//     does not stop on CANCELLED; genform's Status does);
//   - the daily limit's message, "Your daily task limit has been
//     reached.", as a user of the Python client reported Runway's answer
//     in that client's issue tracker.
package runway

// Package fal is fal's queue API (queue.fal.run) behind the provider
// seam: a request's target is a model id, its body the model's input.
// Submit posts it once and keeps the status, response and cancel URLs
// fal hands back in the job's handle, to be followed as they are (fal
// builds them from the model id without its subpath; they are never
// rebuilt). Status reads IN_QUEUE, IN_PROGRESS and COMPLETED (with the
// error fal puts in a failed request's status); Result reads images[].url
// or video.url.
//
// COMPLETED is done only once the result says no image was flagged: a
// request whose safety checker flagged an image (has_nsfw_concepts, FLUX's
// and many other endpoints') ended refused, in fal's terms, and none of
// its files is kept, even when only some images were flagged.
//
// The rule for sending a submit again is package apiclient's: only after
// a 429 or a connection never opened. A submit answered with an error
// made no request (fal hands out a request_id for every request it
// queues, and bills a request's outputs, never its queue time), so 400,
// 401, 402, 403, 404 and 422 are refusals in fal's words; a 403 "User is
// locked" (a balance spent) or a 402 is provider.ErrCapReached, which
// stops the apply. Only a 401 refuses the key. Every other failure of a
// submit, a 5xx above all, is possibly paid. fal lists no requests, so a
// lost submit cannot be found again (no provider.Recoverer). The key is
// checked on fal's Platform API (the price of one model), which makes
// nothing. The HTTP client is package apiclient's; this package only
// adapts it, and owns no state but the results its Status read, held for
// the Result that follows.
package fal

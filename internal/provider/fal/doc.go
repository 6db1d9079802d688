// Package fal is fal's queue API (queue.fal.run) behind the provider
// seam: a request's target is a model id, its body the model's input.
// Submit posts it once and keeps the status, response and cancel URLs
// fal hands back in the job's handle, to be followed as they are (fal
// builds them from the model id without its subpath; they are never
// rebuilt). Status reads IN_QUEUE, IN_PROGRESS and COMPLETED (with the
// error fal puts in a failed request's status); Result reads images[].url
// or video.url.
//
// The rule for sending a submit again is package service's: only after a
// 429 or a connection never opened. fal documents that a request failing
// with a server error is not charged and that a 422 may be, but not that
// a submit answered so made nothing, so every other failure of a submit
// is possibly paid, except 401 and 403 (the key refused: no account to
// charge). fal lists no requests, so a lost submit cannot be found again
// (no provider.Recoverer). The HTTP client is package service's; this
// package only adapts it, and owns no state.
package fal

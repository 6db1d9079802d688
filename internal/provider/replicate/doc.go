// Package replicate is Replicate's predictions API behind the provider
// seam: a request's target is a model ("owner/name", an official model,
// posted to /v1/models/{owner}/{name}/predictions) or a version
// ("owner/name:hash" or a hash, posted to /v1/predictions), its body the
// model's input. Submit sends a Cancel-After header with the time the
// caller's context leaves, so a prediction genform stops following stops
// on its own; the job's handle keeps the get and cancel URLs Replicate
// hands back. Status reads starting, processing, succeeded, failed,
// canceled and aborted, and follows any other status as running, shown
// as it is. Result records the version that ran and the metrics
// (predict_time) as the usage.
//
// A create is sent again only after a 429 or a connection never opened
// (package service's rule); 401, 402, 403, 404 and 422 are refusals that
// made no prediction (Replicate answers them with a problem document in
// place of a prediction), a 402 (too little credit) wrapping
// provider.ErrCapReached so the apply stops, a 403 (a model the account
// may not run) failing that instance alone: only a 401 refuses the key; anything else is possibly paid, and Recover
// finds such a prediction again by listing (see Recover). The HTTP
// client is package service's; this package only adapts it, and owns no
// state.
package replicate

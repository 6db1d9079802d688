// Package conformance is the one suite that holds every provider adapter
// to the contract of provider.Provider, each against its own simulator
// served on the loopback: a job submitted once and followed to its end,
// its outputs downloaded; a failure with its reason; a moderation
// refusal; a 429 storm that never makes a second job; an undocumented
// status followed, not trusted; a lost create answer and a 500 on create
// left possibly paid and never sent again (and found again by a
// provider.Recoverer); an expired output URL that leaves no file; a
// refused key that no error repeats; a create that passes the create gate
// once, before anything is sent.
//
// Its rows are the providers of the one list (package provider/all), each
// from its registration's Conformance (the requests of an image and a
// video, and what the provider's API does where the providers differ): a
// new provider is a row without any change here. Where a provider's API
// has no such thing as a case checks, its row says so and the subtest is
// skipped with the reason.
//
// It does not own the adapters, the simulators or their per-package tests
// (which check what is particular to one provider); it holds no code
// outside its tests.
package conformance

// Package conformance is the one suite that holds every provider adapter
// (package provider/reference, provider/fal, provider/replicate,
// provider/luma) to the contract of provider.Provider, each against its
// own simulator served on the loopback: a job submitted once and followed to its end, its
// outputs downloaded; a failure with its reason; a moderation refusal; a
// 429 storm that never makes a second job; an undocumented status
// followed, not trusted; a lost create answer and a 500 on create left
// possibly paid and never sent again (and found again by a
// provider.Recoverer); an expired output URL that leaves no file; a
// refused key that no error repeats.
//
// It owns the table of providers (providers_test.go: how to start each
// simulator with simkit.Options, how to build the adapter against its
// URL, the requests of an image and a video, and what the provider's API
// does where the providers differ) and the test of each case, which runs
// every row as a subtest. A new provider adapter is one more row. Where a
// provider's API has no such thing as a case checks, its row says so and
// the subtest is skipped with the reason.
//
// It does not own the adapters, the simulators or their per-package tests
// (which check what is particular to one provider); it holds no code
// outside its tests.
package conformance

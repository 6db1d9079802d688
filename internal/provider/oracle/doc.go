// Package oracle makes the providers' own official clients the judges of
// genform's simulators. A simulator written from the same reading as the
// adapter it tests would agree with a wrong adapter and hide the bug; the
// official JavaScript clients (npm: openai, replicate, @fal-ai/client,
// @runwayml/sdk, lumaai), pinned by testdata/package-lock.json and
// installed there by `make oracle` (npm ci), are written by the
// providers themselves.
//
// Its one test, TestOfficialClients, runs in `make test`. For each live
// provider of the one list (package provider/all) it starts the
// provider's simulator on the loopback with its conformance key, and:
//
//   - runs testdata/<name>.test.mjs under `node --test` against it: the
//     official client creates, waits with its own highest-level helper,
//     reads the result, downloads every file and checks it is a picture
//     or a video, lists and cancels where the client can, and meets a
//     wrong key with the client's documented authentication error. A
//     client that cannot drive a simulator proves the simulator wrong;
//   - sends the requests genform builds for every model of the
//     provider's table (and its conformance and live requests) through
//     genform's adapter to a simulator, and keeps the bodies it received.
//
// Then one run of the TypeScript compiler (pinned in the same lock file,
// --strict) holds each body, as an object literal, to the client's type
// of its endpoint's parameters (a field the type does not allow, or a
// value outside a field's type, fails it), and each kind of answer the
// simulator gave the client to the client's type of that answer (a field
// the type requires and the answer lacks fails it; fields the type does
// not name are allowed, as an API answers more than a client reads).
//
// It is skipped, saying why, only where node is not installed; with node
// but without the installed clients it fails and says to run `make
// oracle`. The clients' requests never leave the loopback: each is given
// a fetch that refuses any other origin.
//
// It holds no code outside its tests; it does not own the simulators
// (internal/simulator/...) or the adapters (internal/provider/...).
package oracle

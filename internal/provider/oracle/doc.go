// Package oracle makes the providers' own official clients the judges of
// genform's simulators. A simulator written from the same reading as the
// adapter it tests would agree with a wrong adapter and hide the bug; the
// official JavaScript clients (npm: openai, replicate, @fal-ai/client,
// @runwayml/sdk, lumaai), pinned by testdata/package-lock.json and
// installed there by `make oracle` (npm ci), are written by the
// providers themselves.
//
// Its tests, which run in `make test`:
//
//   - TestOfficialClients starts each live provider's simulator from the
//     one list of providers (package provider/all) on the loopback with
//     its conformance key, and runs testdata/<name>.test.mjs under
//     `node --test` against it: the official client creates, waits with
//     its own highest-level helper, reads the result, downloads every
//     file and checks it is a picture or a video, lists and cancels
//     where the client can, and meets a wrong key with the client's
//     documented authentication error. A client that cannot drive a
//     simulator proves the simulator wrong. Then each kind of answer the
//     simulator gave is held to the client's TypeScript type of it (a
//     field the type requires and the answer lacks, or a value outside
//     the field's type, fails it; fields the type does not name are
//     allowed, as an API answers more than a client reads).
//   - TestRequestsFitTheClientsTypes sends the requests genform builds
//     for every model of every provider's table (and its conformance and
//     live requests) through genform's adapter to the simulator, keeps
//     the bodies the simulator received, and has the TypeScript compiler
//     (pinned in the same lock file) check each, as an object literal,
//     against the official client's type of that endpoint's parameters:
//     a field the client's types do not allow fails it.
//
// Both are skipped, saying why, only where node is not installed; with
// node but without the installed clients they fail and say to run
// `make oracle`. The clients' requests never leave the loopback: each
// is given a fetch that refuses any other origin.
//
// It holds no code outside its tests; it does not own the simulators
// (internal/simulator/...) or the adapters (internal/provider/...).
package oracle

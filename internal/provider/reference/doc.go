// Package reference is the reference generation service (the service
// whose interface docs/service.md describes, and which the built-in
// simulator implements) behind the provider seam: its typed client of the
// seven endpoints (Client: paths, request bodies, the {"status","value"}
// envelope, statuses and the creation detail), and the adapter that puts
// it behind the seam (Provider: its endpoints are the targets, a
// creation's detail is the result, and its videos have a watermark-free
// file, provider.WatermarkFreer). Every request goes through package
// apiclient, which owns the transport every provider shares.
package reference

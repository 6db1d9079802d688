// Package reference is the reference generation service (the service
// whose interface docs/service.md describes, and which the built-in
// simulator implements) behind the provider seam: its endpoints are the
// targets, a creation's detail is the result, and its videos have a
// watermark-free file (provider.WatermarkFreer). The HTTP client is
// package service's; this package only adapts it.
package reference

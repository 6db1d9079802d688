// Package lumaagents is Luma's Agents API, the API of Luma's current
// models (uni-1 and uni-1-max for images, ray-3.2 for video), behind the
// provider seam: a request's target is a model, its body the create
// request without the model, which Submit adds, with the type (image, or
// image_edit when the body has a source; video) unless the body sets one,
// before posting it once to POST /generations. The generation id is
// enough to follow it (GET /generations/{id}). Status reads queued,
// processing, completed and failed, with failure_reason and failure_code
// as the reason (refused when the code is content_moderated), and follows
// any other state as running, shown as it is. Result reads the completed
// generation anew, for fresh links (presigned for an hour), and takes
// every output URL.
//
// A create is sent again only after a 429 or a connection never opened
// (package service's rule); 400, 401, 402, 403, 404, 413 and 422 are
// refusals that made nothing, a 402 (a balance that does not cover the
// generation) wrapping provider.ErrCapReached so the apply stops;
// anything else is possibly paid. The API lists no generations, so a
// create whose answer is lost cannot be found again: it stays possibly
// paid. CheckCredentials gets a generation that does not exist (404 for a
// key Luma takes, 401 for one it refuses). The HTTP client is package
// service's; this package only adapts it, and owns no state.
//
// Where each fact comes from: the endpoints, fields, states, failure
// codes and the base URL from the official clients luma-agents-typescript
// (src/resources/generations.ts, src/client.ts: the Bearer key in
// LUMA_AGENTS_API_KEY, https://agents.lumalabs.ai/v1) and
// luma-agents-python (src/luma_agents/types), version 0.3.0 of
// 2026-06-08; the statuses and their meaning from docs.agents.lumalabs.ai,
// Error handling; the limits from its Rate limits page; the models and
// what each makes from its Models page; the prices from its Pricing page
// (each read 2026-12-07). The TypeScript client, luma-agents, is not on
// the npm registry this repository installs from, so no official client
// drives the simulator (package provider/oracle); the simulator follows
// the client's types and the documents above.
package lumaagents

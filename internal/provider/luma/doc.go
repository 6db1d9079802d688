// Package luma is Luma's Dream Machine API behind the provider seam: a
// request's target is a model (photon-1, photon-flash-1 for images;
// ray-2, ray-flash-2 for videos), its body the create request without
// the model, which Submit adds before posting it once to
// /generations/image or /generations/video by the request's kind. The
// generation id is enough to follow it (GET /generations/{id}). Status
// reads queued, dreaming, completed and failed, with Luma's
// failure_reason as the reason (refused when it is one of the moderation
// reasons Luma's error reference lists), and follows any other state as
// running, shown as it is. Result reads the one asset, assets.image or
// assets.video.
//
// A create is sent again only after a 429 or a connection never opened
// (package service's rule); 400 and 422 (the create errors Luma's error
// reference says the create call itself returns), 401, 402, 403 and 404
// are refusals that made nothing, a 402 (credits that do not cover the
// generation) wrapping provider.ErrCapReached so the apply stops; anything else is possibly paid, and
// Recover finds such a generation again by listing (see Recover).
// CheckCredentials reads GET /credits. The HTTP client is package
// service's; this package only adapts it, and owns no state.
//
// Where each fact comes from: the endpoints, fields, states and the
// error object {"detail"} from the OpenAPI document of
// github.com/lumalabs/lumaai-api (openapi.yaml) and the official
// clients lumaai-python (src/lumaai/types/generation.py,
// types/generations/video_create_params.py, image_create_params.py,
// types/generation_list_params.py, resources/generations/*.py,
// _client.py: the Bearer key in LUMAAI_API_KEY) and lumaai-node
// (src/resources/generations/generations.ts, image.ts: the models the
// current reference lists); the failure reasons and create errors from
// docs.lumalabs.ai, Errors; that a failed generation is refunded from
// docs.lumalabs.ai, FAQ; the limits from docs.lumalabs.ai, Rate Limits.
// Both clients retry a POST on 408, 409, 429 and 5xx without an
// idempotency key (lumaai-python _base_client.py _should_retry;
// lumaai-node core.ts shouldRetry): genform does not. Luma's current
// models (ray-3.2, uni-1, uni-1-max) are served by its Agents API, which
// package provider/lumaagents speaks.
package luma

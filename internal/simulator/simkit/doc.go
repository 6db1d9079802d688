// Package simkit is what genform's simulators share, the reference
// service's (package simulator) and each live provider's (simulator/fal,
// replicate, openai, runway, luma): Server, the frame each is built in
// (its Core, its route table with GET /_sim/jobs, the gate before every
// endpoint, the request log with each answer's status, the Allow of a 405
// read from the route table, and the check of a path in clean form);
// Core, the state and steps behind it (the jobs, the creates per
// fingerprint, the key check, request-rate admission, the concurrency
// limit as a queue or as a refusal, seeded fault draws, lost answers and
// dropped connections, the job files of a data directory in Run's format
// or the API's own, the media files and their downloads cut short, the
// /_sim/jobs report); the options and faults every simulator takes (and
// the job latency they default to); a job's stages and the walk from a
// stage to its status in an API's words; the reading of a request body;
// request fingerprints; the signing of URLs with a key kept in the data
// directory; the rendering of synthetic media (PNG pictures and animated
// GIF videos that depend on what was asked) and the in-memory media
// cache; and serving any simulator on a TCP address or a listener.
//
// It holds no API of its own: each simulator keeps its paths, fields,
// statuses, error bodies and validation, and builds them from these
// pieces. Like them, it never imports package service, so a client that
// passes against a simulator speaks the documented interface rather than
// a quirk both share.
package simkit

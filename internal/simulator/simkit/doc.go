// Package simkit is what genform's simulators share: the options and
// faults every one of them takes (and the job latency they default to),
// the walk from a job's stage to its status in a provider's words, the
// reading of a request body, the rendering of their synthetic media
// (PNG pictures and animated GIF videos that depend on what was asked),
// the in-memory media cache and its downloads cut short, request-rate
// admission and queueing behind a concurrency limit, seeded fault draws,
// dropped connections, request fingerprints, the /_sim/jobs report, the
// job files of a data directory, and serving any simulator on a TCP
// address; and Server, the frame a live provider's simulator embeds (its
// core, its route table with /_sim/jobs, the gate before every endpoint,
// the request log).
//
// It holds no API of its own: the reference service's simulator (package
// simulator) and each live provider's (simulator/fal,
// simulator/replicate) keep their paths, fields, statuses and error
// bodies, and build them from these pieces. Like them, it never imports
// package service, so a client that passes against a simulator speaks
// the documented interface rather than a quirk both share.
package simkit

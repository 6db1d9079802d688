// Package history is the state's history as people look at it: every
// generation recorded, newest first, which instance's record holds each,
// whether one that no record holds can be restored, and whether the
// cache has its files. history, show, show -json and the gallery read it
// alike.
//
// It reads nothing itself: the state's records and the cache are handed
// to New. It does not restore anything (the planner decides a restore and
// the apply engine makes it), and it writes no words or documents.
package history

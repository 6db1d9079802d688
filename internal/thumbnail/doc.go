// Package thumbnail makes the small pictures a pull request's comment
// shows: at most MaxSide pixels on the long side, encoded as PNG, of an
// image (PNG, JPEG, GIF or WebP, decoded with the standard library and
// golang.org/x/image) or of a video's first frame (taken by ffmpeg when it
// is on the PATH; a GIF video's first frame is decoded here).
//
// Pictures are reduced in two steps: whole blocks of pixels are averaged
// into one (a box filter, exact and cheap for the large factors of a
// 4K image), then golang.org/x/image/draw's bilinear filter scales what
// is left to the exact size. A picture larger than MaxPixels is refused
// before it is decoded, so a hostile file cannot take the memory.
//
// It knows nothing of the store, the state or where the bytes come from:
// package operation decides which thumbnails to make and where they go.
package thumbnail

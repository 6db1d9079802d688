package thumbnail

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// ErrNoFFmpeg is the error of a video's thumbnail where no ffmpeg is on
// the PATH: its first frame cannot be taken, and the video is linked
// without one.
var ErrNoFFmpeg = errors.New("ffmpeg is not installed (not on the PATH), so no still frame is taken of a video")

// FindFFmpeg is the path of ffmpeg on the PATH, or "" with none.
func FindFFmpeg() string {
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		return ""
	}
	return p
}

// frameTimeout bounds ffmpeg's work on one video: the first frame of a
// file on disk takes it a fraction of a second.
const frameTimeout = 60 * time.Second

// maxFrameBytes bounds what ffmpeg may write: a frame of MaxPixels as PNG
// without compression, and its headers.
const maxFrameBytes = MaxPixels*4 + MaxPixels/4 + 1<<20

// Video makes the thumbnail of the first frame of the video file at
// path, which ffmpeg (its path; "" is ErrNoFFmpeg) decodes into a PNG that
// Image makes small.
func Video(ctx context.Context, ffmpeg, path string) (*Thumbnail, error) {
	if ffmpeg == "" {
		return nil, ErrNoFFmpeg
	}
	ctx, cancel := context.WithTimeout(ctx, frameTimeout)
	defer cancel()
	// -nostdin: ffmpeg would read keys from a terminal; "file:" keeps a
	// path that looks like a protocol ("http:x.mp4") a file.
	cmd := exec.CommandContext(ctx, ffmpeg, "-nostdin", "-v", "error", "-i", "file:"+path,
		"-frames:v", "1", "-f", "image2pipe", "-c:v", "png", "-compression_level", "0", "pipe:1")
	var stderr bytes.Buffer
	cmd.Stderr = &limited{w: &stderr, n: 4096}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting ffmpeg: %w", err)
	}
	frame, readErr := io.ReadAll(io.LimitReader(out, maxFrameBytes+1))
	if int64(len(frame)) > maxFrameBytes {
		cmd.Process.Kill()
	}
	err = cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("ffmpeg took longer than %v for the first frame: %w", frameTimeout, ctx.Err())
	case int64(len(frame)) > maxFrameBytes:
		return nil, fmt.Errorf("ffmpeg's first frame is larger than %d bytes: the video's frames are too large for a thumbnail", maxFrameBytes)
	case readErr != nil:
		return nil, fmt.Errorf("reading ffmpeg's first frame: %w", readErr)
	case err != nil:
		return nil, fmt.Errorf("ffmpeg could not take the first frame: %v: %s", err, strings.TrimSpace(stderr.String()))
	case len(frame) == 0:
		return nil, fmt.Errorf("ffmpeg found no frame in the video: %s", strings.TrimSpace(stderr.String()))
	}
	return Image(frame)
}

// limited keeps the first n bytes written to it and drops the rest.
type limited struct {
	w io.Writer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(l.n, len(p))
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

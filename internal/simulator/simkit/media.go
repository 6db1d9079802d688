package simkit

import (
	"bytes"
	"container/list"
	"net/http"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// MediaCacheSize is what a simulator's media cache holds at most.
const MediaCacheSize = 256 << 20

// MediaCache keeps rendered files in memory, least recently used out first
// once the total passes its size. Concurrent requests for a file being
// rendered wait for that one rendering.
type MediaCache struct {
	max    int64
	group  singleflight.Group
	mu     sync.Mutex
	size   int64
	order  *list.List // front: most recent
	byName map[string]*list.Element
}

// Cached is a rendered file.
type Cached struct {
	name        string
	Data        []byte
	ContentType string
}

// NewMediaCache holds up to max bytes.
func NewMediaCache(max int64) *MediaCache {
	return &MediaCache{max: max, order: list.New(), byName: map[string]*list.Element{}}
}

// Get returns the cached file name, rendering it with render on a miss; a
// nil file from render is "no such file", and is not cached.
func (c *MediaCache) Get(name string, render func() (*Cached, error)) (*Cached, error) {
	c.mu.Lock()
	if e, ok := c.byName[name]; ok {
		c.order.MoveToFront(e)
		c.mu.Unlock()
		return e.Value.(*Cached), nil
	}
	c.mu.Unlock()
	v, err, _ := c.group.Do(name, func() (any, error) {
		f, err := render()
		if err != nil || f == nil {
			return f, err
		}
		f.name = name
		c.add(f)
		return f, nil
	})
	if err != nil {
		return nil, err
	}
	f, _ := v.(*Cached)
	return f, nil
}

func (c *MediaCache) add(f *Cached) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byName[f.name]; ok {
		return
	}
	c.byName[f.name] = c.order.PushFront(f)
	c.size += int64(len(f.Data))
	for c.size > c.max && c.order.Len() > 1 {
		old := c.order.Remove(c.order.Back()).(*Cached)
		delete(c.byName, old.name)
		c.size -= int64(len(old.Data))
	}
}

// SendMedia writes a media file, or, for the truncateRate share of
// downloads (GET without Range) drawn from trunc, its full Content-Length
// and then half its bytes before closing the connection, so the client
// sees an unexpected EOF.
func SendMedia(w http.ResponseWriter, r *http.Request, f *Cached, trunc *Draw, truncateRate float64) {
	h := w.Header()
	h.Set("Content-Type", f.ContentType)
	h.Set("Cache-Control", "private, max-age=3600")
	if r.Method == http.MethodGet && r.Header.Get("Range") == "" && trunc.Happens(truncateRate) {
		h.Set("Content-Length", strconv.Itoa(len(f.Data)))
		w.WriteHeader(http.StatusOK)
		w.Write(f.Data[:len(f.Data)/2]) //nolint:errcheck // the connection is dropped next anyway
		if err := http.NewResponseController(w).Flush(); err != nil {
			panic(http.ErrAbortHandler)
		}
		Drop(w)
		return
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.Data))
}

// Drop closes the connection of w at once, without a further byte (and
// without a status line when none was flushed): a create whose answer is
// lost, a download cut short. It never holds the connection open.
func Drop(w http.ResponseWriter) {
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		conn.Close()
		return
	}
	// No connection to drop (HTTP/2, or a recorder): abort the
	// response, which net/http turns into a reset stream.
	panic(http.ErrAbortHandler)
}

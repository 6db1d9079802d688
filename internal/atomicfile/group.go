package atomicfile

import "sync"

// A Group makes the files of concurrent Write calls durable together: one
// file-system sync covers every write that was waiting for it, where each
// Write alone syncs its file and then its directory. An apply that
// downloads fifty outputs at once pays for a few syncs instead of a
// hundred. Each sync forces a journal commit: on ext4 a file's two syncs
// cost about 0.15 ms of CPU, a sixth of an apply's whole work for a job.
//
// The order stays the one that makes a write atomic: a write's bytes are
// covered by a sync that starts after they were written, before the
// rename; the rename by a sync that starts after it, before Write
// returns. A Group adds no wait when it is idle: the first writer syncs at
// once, and writers that arrive during that sync share the next one.
//
// On Linux the sync is syncfs(2) on the file system that holds the file,
// so it also writes back whatever else is dirty on that file system (an
// unrelated large copy slows it down; it does not make it wrong). Each
// writer still fsyncs its own file after the shared sync: the file is
// clean by then, so this costs little, and it reports an error in writing
// back that file's bytes, which syncfs does not always report (before
// Linux 5.8, never). Elsewhere a Group changes nothing: each Write syncs
// its own file and directory.
//
// A Group is safe for concurrent use; its zero value is ready to use.
type Group struct {
	mu  sync.Mutex
	fss map[uint64]*fsSync
}

// fsSync is the group commit of one file system. Syncs are numbered in
// the order they start; a writer waits for the first one that starts after
// it asked, and takes that sync's result.
type fsSync struct {
	cond    sync.Cond
	started uint64 // the number of the last sync started
	done    uint64 // the number of the last sync finished
	running bool
	waiting int // writers waiting for a sync to finish
	failed  map[uint64]error
}

// syncFS is syncfs; tests wrap it to hold a sync while writers queue.
var syncFS = syncfs

// InGroup makes Write sync through g instead of syncing its own file and
// directory. A nil g is no group.
func InGroup(g *Group) Option {
	return func(o *options) { o.group = g }
}

// Syncs is how many file-system syncs g has made, over every file system.
// A program reports it to show that its writes went through g and how far
// they were grouped.
func (g *Group) Syncs() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, fs := range g.fss {
		n += int(fs.started)
	}
	return n
}

// sync returns once a sync of file system dev, started after the call,
// has finished, with that sync's error. dir is the writer's directory, on
// dev: the writer that runs a sync opens its own to name the file system.
func (g *Group) sync(dev uint64, dir string) error {
	g.mu.Lock()
	fs := g.fss[dev]
	if fs == nil {
		if g.fss == nil {
			g.fss = map[uint64]*fsSync{}
		}
		fs = &fsSync{failed: map[uint64]error{}}
		fs.cond.L = &g.mu
		g.fss[dev] = fs
	}
	// The sync running now may have started before this writer's bytes
	// or rename were made: only the next one to start is sure to cover
	// them.
	mine := fs.started + 1
	for fs.done < mine {
		if fs.running {
			fs.waiting++
			fs.cond.Wait()
			fs.waiting--
			continue
		}
		fs.running = true
		fs.started++
		n := fs.started
		g.mu.Unlock()
		err := syncFS(dir)
		g.mu.Lock()
		fs.running = false
		fs.done = n
		if err != nil {
			fs.failed[n] = err
		}
		fs.cond.Broadcast()
	}
	err := fs.failed[mine]
	g.mu.Unlock()
	return err
}

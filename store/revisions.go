package store

import (
	"context"
	"errors"
	"sort"
	"sync"

	"github.com/agora/agora/internal/rdb"
)

// Every aggregate — the keys that share one hash tag: a post with its thread, a user with their
// relations, a ranking, the leaderboard — has a revision: a counter at <prefix><tag>:rev that
// every write to the aggregate raises, inside the same script as the write. A response that
// records the revision of every aggregate it read can later be proven current by reading those
// counters again: equal counters mean that nothing it read has changed since. That is what makes
// the response cache exact, on any number of server replicas, with no TTL.

// Revisions records the revisions of the aggregates one response reads. A recording Loader
// (Store.NewRecordingLoader) reads them in the same pipeline as the data, each just before the
// data of its aggregate, so a recorded revision is never newer than the data read.
type Revisions struct {
	mu     sync.Mutex
	revs   map[string]string // revision key → revision ("" for an aggregate never written)
	broken bool              // a revision could not be read, or changed during the response

	// The viewer's block list, when the response consulted it (see Blocks): the revision of the
	// viewer's aggregate read with it, which an answer kept for that viewer records, and whether
	// the list blocked anyone, which makes the answer the viewer's own.
	blocksKey, blocksRev string
	blocking             bool
}

// NewRevisions returns an empty record.
func NewRevisions() *Revisions { return &Revisions{revs: make(map[string]string)} }

// revRead is the read of one aggregate's revision in a batch.
type revRead struct {
	key string
	cmd *rdb.StringCmd
}

// start returns the revision reads that go before a batch's data: one per aggregate the batch
// reads (and one per key of viewer-only state with a counter of its own: keys.ownRevision). Every batch reads them afresh, even for aggregates read before, because batches run on
// different connections: only a revision read before the data on the same connection is known to
// be no newer than that data.
func (r *Revisions) start(k keys, batch []*call) []*revRead {
	var out []*revRead
	seen := make(map[string]bool, 4)
	for _, c := range batch {
		if tagOf(c.r.rkey) == "" {
			r.mu.Lock()
			r.broken = true // cannot happen: every key the loader reads has a hash tag
			r.mu.Unlock()
			continue
		}
		rev := k.revOf(c.r.rkey)
		if seen[rev] {
			continue
		}
		seen[rev] = true
		out = append(out, &revRead{key: rev})
	}
	return out
}

// finish records the revisions a batch read. A revision that differs from one read earlier in
// the same response means the aggregate changed while the response was being read: the response
// cannot be cached.
func (r *Revisions) finish(reads []*revRead, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.broken = true
	}
	for _, rr := range reads {
		if rr.cmd == nil {
			r.broken = true
			continue
		}
		v, err := rr.cmd.Result()
		if err != nil && !errors.Is(err, rdb.Nil) {
			r.broken = true
			continue
		}
		if old, ok := r.revs[rr.key]; ok && old != v {
			r.broken = true
		}
		r.revs[rr.key] = v
	}
}

// timeDependent marks the response as one that changes when time passes, with no write to raise
// a revision (a list of what is pending until a given time): it cannot be cached.
func (r *Revisions) timeDependent() {
	r.mu.Lock()
	r.broken = true
	r.mu.Unlock()
}

// blocksRead records that the response consulted the viewer's block list, read with the
// revision rev of the counter key; blocking says the list is not empty.
func (r *Revisions) blocksRead(key, rev string, blocking bool) {
	r.mu.Lock()
	r.blocksKey, r.blocksRev = key, rev
	r.blocking = r.blocking || blocking
	r.mu.Unlock()
}

// ViewerDependent reports whether the response consulted a block list that blocks someone: its
// answer is then the viewer's own, whatever else it read.
func (r *Revisions) ViewerDependent() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.blocking
}

// Snapshot returns the recorded revisions as sorted keys and their values; ok is false when the
// record cannot prove a response current. forViewer includes the revision read with the viewer's
// block list, when the response consulted it: an answer kept for one viewer must go stale when
// their list changes, while one shared by every viewer does not depend on anyone's list.
func (r *Revisions) Snapshot(forViewer bool) (keys, values []string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken {
		return nil, nil, false
	}
	revs := r.revs
	if forViewer && r.blocksKey != "" {
		if old, ok := revs[r.blocksKey]; ok && old != r.blocksRev {
			return nil, nil, false // the viewer's aggregate changed while the response was made
		}
		revs = make(map[string]string, len(r.revs)+1)
		for k, v := range r.revs {
			revs[k] = v
		}
		revs[r.blocksKey] = r.blocksRev
	}
	keys = make([]string, 0, len(revs))
	for k := range revs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	values = make([]string, len(keys))
	for i, k := range keys {
		values[i] = revs[k]
	}
	return keys, values, true
}

// RevisionsCurrent reports whether the aggregates' revisions (keys and values from a Snapshot)
// are still the same, in one round trip: a pipeline of GETs (on a cluster, one per master, sent in
// parallel). An error means Redis could not say.
func (s *Store) RevisionsCurrent(ctx context.Context, keys, values []string) (bool, error) {
	ok, _, err := s.RevisionsAndMarks(ctx, keys, values, "", nil)
	return ok, err
}

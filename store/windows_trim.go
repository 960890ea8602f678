package store

import (
	"context"
	"fmt"
	"time"

	"github.com/agora/agora/jobs"
)

// The windowed TOP sets are trimmed by writes (windows.lua, trimLimit posts a set per write), and
// reads filter exactly what is not trimmed yet (page.lua): each past post left costs every page
// read a lookup. A burst of posts followed by a quiet time, with no write to trim them, left every
// read of the window filtering the whole burst. A read that filters more than trimBacklogAt posts
// now queues a trim job for its rankings, which trims them all, a bounded trim per script call:
// later reads filter few. The job is idempotent (trimming only takes out past posts and moves the
// marks forward), its id names the rankings so that a queued one is not queued twice, and each
// process queues it at most once per trimNoteFor per rankings, so that hot reads do not each
// send an enqueue.

// jobTrim is the job that trims the windowed TOP sets of one set of rankings: its argument is the
// group ("" for the site's rankings).
const jobTrim = "trim"

const (
	// trimBacklogAt is how many past posts a read may filter before it queues a trim.
	trimBacklogAt = 2 * trimLimit
	// trimNoteFor is how long a process waits before it queues the trim of the same rankings
	// again.
	trimNoteFor = time.Minute
	// trimJobLimit is how many posts one call of the trim job takes out of each set, and
	// trimJobRounds how many calls one run makes before it yields to other jobs (the job is then
	// due again at once).
	trimJobLimit  = 4 * trimLimit
	trimJobRounds = 64
)

// trimJob is the trim job of the rankings of group.
func trimJob(group string) jobs.Job {
	return jobs.Job{ID: jobTrim + ":" + group, Kind: jobTrim, Arg: group}
}

// trimBacklog queues the trim of the rankings of a windowed TOP page read that filtered backlog
// past posts, when they are more than trimBacklogAt and this process has not queued it lately.
// A failure to queue is logged, not returned: the page is exact either way, and the next read
// that sees the backlog queues it again.
func (l *Loader) trimBacklog(ctx context.Context, cut windowCut, backlog int) {
	if cut.set == "" {
		return
	}
	s := l.s
	if s.onWindowBacklog != nil {
		s.onWindowBacklog(backlog)
	}
	if backlog <= trimBacklogAt {
		return
	}
	now := s.now()
	s.trimMu.Lock()
	if at, ok := s.trimNoted[cut.group]; ok && now.Sub(at) < trimNoteFor {
		s.trimMu.Unlock()
		return
	}
	if s.trimNoted == nil || len(s.trimNoted) >= trimNotesCap {
		s.trimNoted = map[string]time.Time{} // forget the old notes: at worst one more enqueue each
	}
	s.trimNoted[cut.group] = now
	s.trimMu.Unlock()
	if err := s.jobs.Enqueue(ctx, trimJob(cut.group)); err != nil {
		s.trimMu.Lock()
		delete(s.trimNoted, cut.group)
		s.trimMu.Unlock()
		s.opts.Log.WarnContext(ctx, "could not queue the trim of windowed TOP sets", "group", cut.group, "err", err)
	}
}

// trimNotesCap bounds the notes of queued trims one process keeps.
const trimNotesCap = 10_000

// runTrimJob trims the windowed TOP sets of the job's rankings, both parts, up to their cutoffs
// now: up to trimJobRounds calls of windows.lua in its "trim" mode, then, if a set had more, it
// is due again at once.
func (s *Store) runTrimJob(ctx context.Context, j jobs.Job) error {
	r := s.k.ranking(j.Arg)
	for range trimJobRounds {
		now := s.now()
		out, err := s.runScripts(ctx, []scriptCall{trimCall(r, now), trimCall(r.nsfw(), now)})
		if err != nil {
			return fmt.Errorf("trim the windowed TOP sets of group %q: %w", j.Arg, err)
		}
		more := false
		for _, v := range out {
			n, err := replyInt("windows", v)
			if err != nil {
				return err
			}
			more = more || n == 1
		}
		if !more {
			return nil
		}
	}
	return jobs.Later{At: s.now()}
}

// trimCall trims the windowed TOP sets of one part of a set of rankings, r, up to their cutoffs
// at now, at most trimJobLimit posts a set (windows.lua in its "trim" mode).
func trimCall(r ranking, now time.Time) scriptCall {
	return windowsScript(r, now, "", 0, "trim", 0, 0, trimJobLimit)
}

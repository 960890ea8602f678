package store

import (
	"context"
	"sync"
	"time"

	"github.com/agora/agora/jobs"
)

// Background work runs in jobs (package jobs): the store enqueues a job for each side effect a
// write causes beyond its own derived writes, with an id derived from the cause, and registers
// here what each kind of job does. Every handler is idempotent.
const (
	jobFanout = "fanout" // "<post> <cursor>": push a new post to feeds of its author's push set
	jobUnfeed = "unfeed" // "<post> <author> <cursor>": remove a deleted post from those feeds

	jobNotifyComment = "notify-comment" // "<post> <number>": a new comment's REPLY and MENTIONs
	jobNotifyPost    = "notify-post"    // "<post>": a new post's MENTIONs
	jobNotifyFollow  = "notify-follow"  // "<follower> <followee>": a new follower's FOLLOW
)

// handleJobs registers the store's job handlers with its engine.
func (s *Store) handleJobs() {
	s.jobs.Handle(jobFanout, s.runFeedJob)
	s.jobs.Handle(jobUnfeed, s.runFeedJob)
	s.jobs.Handle(jobPublish, s.runPublishJob)
	s.jobs.Handle(jobRepair, s.runRepairJob)
	s.jobs.Handle(jobNotifyComment, s.runNotifyComment)
	s.jobs.Handle(jobNotifyPost, s.runNotifyPost)
	s.jobs.Handle(jobNotifyFollow, s.runNotifyFollow)
	s.jobs.Handle(jobNotifyMod, s.runNotifyMod)
	s.jobs.Handle(jobWatchComment, s.runWatchJob)
	s.jobs.Handle(jobWatchPost, s.runWatchJob)
	s.jobs.Handle(jobMail, s.runMailJob)
	s.jobs.Handle(jobMailDecoy, s.runMailDecoy)
	s.jobs.Handle(jobEraseUser, s.runEraseJob)
	s.jobs.Handle(jobRelabel, s.runRelabelJob)
	s.jobs.Handle(jobCompactVotes, s.runCompactVotes)
	s.jobs.Handle(jobTrim, s.runTrimJob)
}

// Jobs returns the store's job engine, for operators' tools (dead letters) and for tests that
// run due jobs at a chosen moment.
func (s *Store) Jobs() *jobs.Engine { return s.jobs }

// censusInterval is how often one process reports the job queues.
const censusInterval = time.Minute

// RunBackground does this process's share of the background work until ctx ends: it runs jobs
// (see package jobs), reads the site admins the operator grants (see admins.go), reads the memory
// of Redis (see Memory) and, in one process at a time under a lock, reports the queues, warns of
// dead letters and migrates a keyspace whose recorded layout is older than Layout (see Migrate). Every server
// process runs it; none needs to be configured apart. It returns once running jobs have finished
// or gone back to the queue.
func (s *Store) RunBackground(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { s.jobs.Run(ctx) })
	wg.Go(func() { s.jobs.Every(ctx, "census", censusInterval, s.census) })
	wg.Go(func() { s.watchAdmins(ctx) })
	wg.Go(func() { s.migrateInBackground(ctx) })
	wg.Go(func() { s.watchMemory(ctx) })
	wg.Wait()
}

// census logs the sizes of the job queues, and a warning while there are dead letters.
func (s *Store) census(ctx context.Context) error {
	c, err := s.jobs.Census(ctx)
	if err != nil {
		return err
	}
	if c.Dead > 0 {
		s.opts.Log.WarnContext(ctx, "background jobs failed for good: list them with `agora dead-jobs`",
			"dead", c.Dead, "due", c.Due, "running", c.Running)
		return nil
	}
	s.opts.Log.InfoContext(ctx, "background jobs", "due", c.Due, "running", c.Running)
	return nil
}

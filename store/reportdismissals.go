package store

import (
	"context"
	"fmt"
)

// Reporting the reporter. A moderator resolves a report as actioned (they acted on it, the
// default) or dismissed (it was unfounded). A dismissal counts against the reporter: each is a
// member of a sorted set in the reporter's slot ({u:<user>}:dismissed, report id → when it was
// dismissed), written after the resolve like the rest of the reporter's side (releaseResolved,
// which the resolve's repair runs again; a report id is added once). A user with
// Options.ReportDismissals dismissals within Options.ReportDismissalWindow may not report
// (KindRateLimited) until the oldest of them leaves the window: the check is ratelimit.lua's, on
// that set, in the report's first round trip, exact at read time. Site admins are exempt; off,
// like every limit, with a negative Options.WriteLimit.

// ReportResolution is how a moderator resolved a report.
type ReportResolution string

// The resolutions of a report.
const (
	ReportActioned  ReportResolution = "ACTIONED"
	ReportDismissed ReportResolution = "DISMISSED"
)

// The resolutions as a report's record keeps them.
const (
	resolutionActioned  = "actioned"
	resolutionDismissed = "dismissed"
)

// stored returns the resolution as a report's record keeps it; KindInvalid for an unknown one.
func (r ReportResolution) stored() (string, error) {
	switch r {
	case ReportActioned, "":
		return resolutionActioned, nil
	case ReportDismissed:
		return resolutionDismissed, nil
	}
	return "", invalidf("resolution must be ACTIONED or DISMISSED")
}

// dismissalLimit is the limit on a user's dismissed reports.
func (s *Store) dismissalLimit() limit {
	return limit{"dismissed reports", s.opts.ReportDismissals, s.opts.ReportDismissalWindow}
}

// recordDismissal counts a dismissed report (id, rec) against its reporter.
func (s *Store) recordDismissal(ctx context.Context, id string, rec *reportRecord) error {
	if rec.Resolution != resolutionDismissed {
		return nil
	}
	_, err := s.run(ctx, "report_dismissed", []string{s.k.userDismissed(rec.Reporter)},
		id, rec.ResolvedAt, s.now().UnixMilli(), s.opts.ReportDismissalWindow.Milliseconds())
	if err != nil {
		return fmt.Errorf("count the dismissal of report %s against %s: %w", id, rec.Reporter, err)
	}
	return nil
}

// rebuildDismissals counts every dismissed report within the window against its reporter again,
// from the reports themselves (agora rebuild): a count lost with a failover comes back.
func (s *Store) rebuildDismissals(ctx context.Context) error {
	iter := s.cmd().HScanIterator(s.k.reportEntries(), "", 500)
	for iter.Next(ctx) {
		id := iter.Val()
		if !iter.Next(ctx) {
			break
		}
		rec := parseReportRecord(iter.Val())
		if rec == nil || !rec.Resolved {
			continue
		}
		if err := s.recordDismissal(ctx, id, rec); err != nil {
			return err
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("rebuild the dismissed reports: %w", err)
	}
	return nil
}

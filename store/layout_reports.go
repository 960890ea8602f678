package store

import (
	"context"
	"fmt"
)

// fileReportsDoes is what the migration from layout 5 does for reports, for `agora migrate
// --dry-run`.
const fileReportsDoes = "record every report in its reporter's history ({u:<name>}:reports:filed: report id → " +
	"when it was made), which the export of an account reads for the reports it filed, open or resolved " +
	"(about 16 bytes per report while a user has filed at most 128, 100 beyond)"

// fileReports records every report of {reports}:entries in its reporter's history
// (userReportsFiled; report_filed.lua: the migration from layout 5) and returns how many it
// recorded. It reads the entries ExportPage at a time (HSCAN) and writes each page in one
// pipeline of scripts, one per report on its reporter's slot. Safe beside traffic: a report
// written meanwhile is recorded by report_reserve with the same score; and to run again: a
// recorded report is recorded again unchanged, so a migration cut off resumes from the start.
// A deleted reporter's history is not made anew.
func (s *Store) fileReports(ctx context.Context) (int, error) {
	entries := s.k.reportEntries()
	recorded := 0
	var cursor uint64
	for {
		kv, next, err := s.cmd().HScan(ctx, entries, cursor, "", ExportPage).Result()
		if err != nil {
			return recorded, fmt.Errorf("read %s: %w", entries, err)
		}
		var calls []scriptCall
		for i := 0; i+1 < len(kv); i += 2 {
			rec := parseReportRecord(kv[i+1])
			if rec == nil || !validUserName(rec.Reporter) {
				continue
			}
			calls = append(calls, scriptCall{name: "report_filed",
				keys: []string{s.k.user(rec.Reporter), s.k.userReportsFiled(rec.Reporter)}, args: []any{kv[i], rec.At}})
		}
		if len(calls) > 0 {
			vals, err := s.runScripts(ctx, calls)
			if err != nil {
				return recorded, fmt.Errorf("record reports in their reporters' histories: %w", err)
			}
			for _, v := range vals {
				n, err := replyInt("report_filed", v)
				if err != nil {
					return recorded, err
				}
				if n == 1 {
					recorded++
				}
			}
		}
		if cursor = next; cursor == 0 {
			return recorded, nil
		}
	}
}

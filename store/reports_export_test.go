package store

import (
	"context"
	"encoding/json"
	"strconv"
)

// Hooks of reports for the external tests of package store_test.

// ReportFirstStep runs only the reporter's side of a report (noted for repair, as a report is), as
// a request cut off after its first step would.
func (s *Store) ReportFirstStep(ctx context.Context, user UserKey, target, reason string) error {
	rec, err := s.reportTarget(ctx, user, target)
	if err != nil {
		return err
	}
	rec.Reporter, rec.Reason, rec.At, rec.Ver = string(user), reason, s.now().UnixMilli(), 1
	if _, err := s.allowWrite(ctx, string(user), repairReport+":"+string(user)+":"+target); err != nil {
		return err
	}
	seq, err := s.rdb.Incr(ctx, s.k.reportSeq()).Result()
	if err != nil {
		return err
	}
	rec.ID = strconv.FormatInt(seq, 10)
	raw, _ := json.Marshal(rec)
	_, err = s.run(ctx, "report_reserve", []string{s.k.userReports(string(user)), s.k.userReportTargets(string(user)),
		s.k.userReportsFiled(string(user))},
		s.now().UnixMilli(), s.now().Add(ReportLimitWindow).UnixMilli(), MaxOpenReports, target, string(raw), rec.ID, "", rec.At)
	return err
}

// OpenReports returns how many open reports count against uid's limit now.
func (s *Store) OpenReports(ctx context.Context, uid UserKey) (int64, error) {
	return s.rdb.ZCount(ctx, s.k.userReports(string(uid)), "("+strconv.FormatInt(s.now().UnixMilli(), 10), "+inf").Result()
}

// ResolveFirstStep runs only the atomic step of a resolve by an admin (noted for repair, as a
// resolve is), as a request cut off after it would.
func (s *Store) ResolveFirstStep(ctx context.Context, actor UserKey, id string) error {
	key, err := parseTypedID(id, TypeReport)
	if err != nil {
		return err
	}
	recs, err := s.NewLoader().reportRecords(ctx, []string{key})
	if err != nil {
		return err
	}
	if _, err := s.allowWrite(ctx, string(actor), repairResolve+":"+key); err != nil {
		return err
	}
	_, err = s.run(ctx, "report_resolve", s.resolveKeys(recs[0].scopes()), key, string(actor), s.now().UnixMilli(), "")
	return err
}

package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Site admins belong to accounts, never to names, so that nobody becomes an admin by signing up a
// name before its owner does. Two sources grant it:
//
//   - The operator's command, `agora admin grant NAME` (GrantAdmin) and `agora admin revoke NAME`
//     (RevokeAdmin), on an account that exists: kept by user key in the hash {admins}, which every
//     replica reads at start and every adminRefresh after (RunBackground).
//   - The admins setting (Options.Admins, -admins), by name. The first time a process is started
//     with a name, it records the moment in {admins}:named; the name makes an admin only of an
//     account created before that moment. A name nobody had signed up then grants nothing, to
//     whoever signs it up later, across restarts: start-up logs a warning, and the operator grants
//     the account by command once it is the right one.
//
// A change of who is an admin raises the revision of each user it concerns (the replica that sees
// it first does), so that no cached answer goes on showing their old User.isAdmin.

// adminRefresh is how often each replica reads the operator's grants again.
const adminRefresh = 5 * time.Second

// adminSet is who is a site admin, by user key: by the admins setting and by the operator's grants.
type adminSet struct {
	configured, granted map[string]bool
}

// IsAdmin reports whether the user is a site admin (see above).
func (s *Store) IsAdmin(user UserKey) bool {
	a := s.admins.Load()
	return user != "" && a != nil && (a.configured[string(user)] || a.granted[string(user)])
}

// Admins returns the site admins by the admins setting and by the operator's grants, as this
// process last read them, each sorted.
func (s *Store) Admins() (configured, granted []UserKey) {
	a := s.admins.Load()
	keys := func(m map[string]bool) []UserKey {
		out := make([]UserKey, 0, len(m))
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, UserKey(k))
		}
		return out
	}
	return keys(a.configured), keys(a.granted)
}

// resolveAdmins binds the names of Options.Admins to the accounts created before the setting
// first named them, warns of the others, and reads the operator's grants.
func (s *Store) resolveAdmins(ctx context.Context) error {
	configured := map[string]bool{}
	if names := s.opts.Admins; len(names) > 0 && !s.opts.ReadOnly { // recording the names is a write
		args := []any{"named", s.now().UnixMilli()}
		for _, n := range names {
			args = append(args, n)
		}
		v, err := s.run(ctx, "admins", []string{s.k.admins(), s.k.adminNames()}, args...)
		if err != nil {
			return fmt.Errorf("record the admin names: %w", err)
		}
		firsts, err := replyArray("admins", v, len(names))
		if err != nil {
			return fmt.Errorf("record the admin names: %w", err)
		}
		created := make([]*rdb.SliceCmd, len(names))
		ops := make([]op, len(names))
		for i, n := range names {
			key := s.k.user(n)
			ops[i] = op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
				created[i] = p.HMGet(ctx, key, "created", "deleted")
				return created[i], nil
			}}
		}
		if err := s.pipeline(ctx, ops, false); err != nil && !isNil(err) {
			return fmt.Errorf("read the admins' accounts: %w", err)
		}
		for i, n := range names {
			first, err := replyString("admins", firsts[i])
			if err != nil {
				return fmt.Errorf("record the admin names: %w", err)
			}
			var c, deleted string
			if v := created[i].Val(); len(v) == 2 {
				c, deleted = str(v[0]), str(v[1])
			}
			if deleted == "1" { // a deleted account's marker keeps its creation time
				s.opts.Log.WarnContext(ctx, "an admin name is a deleted account: it grants nothing; remove it from the admins setting", "name", n)
				continue
			}
			if c != "" && first != "" && atoi64(c) < atoi64(first) {
				configured[n] = true
				continue
			}
			s.opts.Log.WarnContext(ctx, "an admin name has no account created before the admins setting first named it: it grants nothing, "+
				"whoever signs it up; grant the right account with `agora admin grant NAME`",
				"name", n, "named_at", fromMillis(atoi64(first)), "account", c != "")
		}
	}
	s.admins.Store(&adminSet{configured: configured})
	return s.refreshAdmins(ctx)
}

// refreshAdmins reads the operator's grants again, and raises the revision of each user whose
// standing changed since this process last read them.
func (s *Store) refreshAdmins(ctx context.Context) error {
	s.adminMu.Lock()
	defer s.adminMu.Unlock()
	all, err := s.cmd().HGetAll(ctx, s.k.admins()).Result()
	if err != nil {
		return fmt.Errorf("read the admins: %w", rdb.Unavailable(ctx, err))
	}
	granted := make(map[string]bool, len(all))
	for uid := range all {
		granted[uid] = true
	}
	old := s.admins.Load()
	s.admins.Store(&adminSet{configured: old.configured, granted: granted})
	if old.granted == nil {
		return nil // the first reading: this process has served nothing yet
	}
	var ops []op
	for uid := range granted {
		if !old.granted[uid] {
			ops = append(ops, s.reviseOp(ctx, uid))
		}
	}
	for uid := range old.granted {
		if !granted[uid] {
			ops = append(ops, s.reviseOp(ctx, uid))
		}
	}
	if len(ops) == 0 {
		return nil
	}
	if err := s.pipeline(ctx, ops, false); err != nil {
		return fmt.Errorf("revise the admins' users: %w", err)
	}
	return nil
}

// reviseOp raises the revision of the user uid's aggregate.
func (s *Store) reviseOp(ctx context.Context, uid string) op {
	key := s.k.revOf(s.k.user(uid))
	return op{key: key, fill: func(p rdb.Pipeliner) (rdb.Cmder, rdb.Cmder) {
		return p.Incr(ctx, key), nil
	}}
}

// watchAdmins reads the operator's grants every adminRefresh until ctx ends.
func (s *Store) watchAdmins(ctx context.Context) {
	t := time.NewTicker(adminRefresh)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.refreshAdmins(ctx); err != nil && ctx.Err() == nil {
				s.opts.Log.WarnContext(ctx, "read the site admins", "err", err)
			}
		}
	}
}

// GrantAdmin makes the account name a site admin, on every replica within adminRefresh: the
// operator's command `agora admin grant NAME`. An account that does not exist, or was deleted
// (its marker keeps its creation time; see DeleteAccount), is KindNotFound.
func (s *Store) GrantAdmin(ctx context.Context, name string) error {
	uid := strings.ToLower(name)
	if !validUserName(name) {
		return notFoundf("no user %q", name)
	}
	h, err := s.cmd().HMGet(ctx, s.k.user(uid), "created", "deleted").Result()
	if err != nil {
		return fmt.Errorf("grant admin: %w", rdb.Unavailable(ctx, err))
	}
	switch {
	case str(h[0]) == "":
		return notFoundf("no user %q", name)
	case str(h[1]) == "1":
		return notFoundf("the account %q was deleted: it cannot be made an admin", name)
	}
	return s.changeAdmins(ctx, "grant", uid)
}

// RevokeAdmin ends the operator's grant of site admin to the account name (the command
// `agora admin revoke NAME`); revoking what was never granted changes nothing. An account the
// admins setting makes an admin stays one until the setting no longer names it: that is
// KindInvalid, after the grant is revoked.
func (s *Store) RevokeAdmin(ctx context.Context, name string) error {
	uid := strings.ToLower(name)
	if err := s.changeAdmins(ctx, "revoke", uid); err != nil {
		return err
	}
	if s.opts.RequireEmail {
		// An admin writes without a verified address; the account may now need one to send:
		// the send leases its checks granted end (message_leases.go).
		if err := s.revokeSendLeases(ctx, uid); err != nil {
			return fmt.Errorf("revoke admin: %w", err)
		}
	}
	if s.admins.Load().configured[uid] {
		return invalidf("%s is an admin by the admins setting (-admins, AGORA_ADMINS): remove it there", name)
	}
	return nil
}

// changeAdmins grants or revokes site admin to uid and reads the grants again.
func (s *Store) changeAdmins(ctx context.Context, change, uid string) error {
	if _, err := s.run(ctx, "admins", []string{s.k.admins(), s.k.adminNames()}, change, s.now().UnixMilli(), uid); err != nil {
		return fmt.Errorf("%s admin: %w", change, err)
	}
	return s.refreshAdmins(ctx)
}

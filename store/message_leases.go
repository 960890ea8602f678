package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/agora/agora/internal/rdb"
)

// Send leases let a message be sent in one round trip.
//
// A message's checks live in other slots than its conversation: the sender's limits, site bans
// and account in {u:<sender>}, each side's block list in its own slot, the recipient's account
// in theirs. A Cluster runs the scripts of one pipeline's slots apart, so a message sent in the
// pipeline of its checks would be written even when a check refused it. SendMessage therefore
// checks first and writes after (two round trips), and the conversation's script then grants
// the sender a lease: a field of the conversation, g:<sender>, that lets them send up to the
// rest of their limits during SendLeaseTTL without the checks of other slots (see
// message_send.lua). A message on a lease is one round trip: the conversation's script checks
// the lease where the message is written, and the sender's limits record the message in the
// same pipeline, so that the checks the next lease is granted after count it.
//
// What the checks read ends a lease where it changes, after its own write, by raising the
// conversation's lease version (bv):
//
//   - a block, either way, ends the leases of the one conversation (setBlock);
//   - a site ban of the sender, the deletion of either account, and under Options.RequireEmail an
//     address that is no longer verified (a new one, one dropped) or an admin's grant revoked,
//     end the leases of every conversation of the user's mailbox (revokeSendLeases; a deletion's
//     chain does it again, should the process stop after the deletion's step, and a ban's repair);
//   - a sender over their write or message limit (which other conversations' messages filled)
//     loses the lease of the conversation where the limit was found, after the message that found
//     it.
//
// These rules make sure no lease is granted across such a change, nor outlives it:
//
//   - A grant compares the conversation's version with one this process read in a reply of
//     message_send a round trip before the checks (sendLeases.version), never with one read with
//     them: on a Cluster the checks' slots answer apart, so a change could land after the check
//     that reads it and before a version read beside it, which would then hold the change's new
//     version. A process that has read none (the first message it sends in a conversation)
//     grants no lease.
//   - The checks that may grant a lease note its conversation in the sender's slot (the user's
//     msgLeases, lease_note.lua) before, in the same round trip and slot, they read the bans, the
//     account and the address; the end of a user's leases walks those notes, so it reaches every
//     conversation whose lease checks that missed the change granted or are granting, in whichever
//     of the user's lists it is, or none. It walks the user's mailbox lists too, for the others'
//     leases with the user: a lease is granted only in a conversation its recipient accepted,
//     which is then among their conversations (a deleted account's mailbox is marked gone before
//     the walk, so that it does not move meanwhile).
//   - A message request's sender stays checked message by message, so requests to strangers stay
//     within the limits exactly however many are sent at once; and under Options.RequireEmail an
//     admin (who writes without a verified address) is granted no lease: a replica whose list of
//     admins is behind a revocation would grant one that outlives its next read of the list.
//
//   - Within one conversation the limits hold exactly whichever replicas grant and spend its
//     leases: every message of the sender's there counts against the lease that holds, and a grant
//     that replaces one takes off the sender's messages there since the count its process read
//     with the version (message_send.lua, c:<user>).
//   - A message on a lease leaves its repair note unsettled: should the lease no longer hold, the
//     mailboxes took its steps for nothing, and should the process stop before it derives them
//     again, the repair does, RepairGrace after the conversation's last note.
//
// What a lease lets through: a change that lands between the checks and the write of the message
// that grants it ends the lease it grants, or prevents it; a message on a lease between a change's
// write and its end of the leases goes through, as one checked just before the change would. Over
// the limits, filled meanwhile in other accepted conversations, a sender may send in each
// conversation whose lease holds at most what was left of the limits when it was granted (the
// lease's count, which the conversation's script spends exactly, also under concurrent sends).
// The site filters are checked by this process's copy, as for every write, and only while the
// copy is fresh (filterCall): a stale copy sends the message through the checks, which refresh
// it. A process that stops between a change's write and its end of the leases leaves them to
// end by themselves, at most SendLeaseTTL later (a ban's repair and a deletion's chain end them
// sooner; a block's client, told of the failure, blocks again).
//
// Leases are known per process (sendLeases): a replica sends on a lease its own checks granted,
// and sends through the checks otherwise, which grants it one in turn. A lease's end is fixed
// when it is granted: messages on it do not extend it.

// SendLeaseTTL is how long a send lease holds after the message that granted it.
const SendLeaseTTL = time.Minute

// leaseNoteSlack is how much longer than SendLeaseTTL a conversation stays noted where the ends
// of a user's leases look (lease_note.lua): the lease is granted a round trip after the note.
const leaseNoteSlack = 10 * time.Second

// maxLeaseNotes bounds the conversations a user's lease notes keep (lease_note.lua), the latest:
// more than the limits let one user write to in the notes' minute. With the limits off a user
// writing to more loses the oldest notes, and the ends of their leases may then miss a lease.
const maxLeaseNotes = 1000

// maxLocalLeases bounds how many leases a process remembers (sendLeases): past it, it forgets the
// ones that ended, then all of them. A forgotten lease only costs its next message the checks.
const maxLocalLeases = 10000

// sendLeases is what this process knows of the send leases it was granted: by sender and
// recipient, until when (Unix ms) and how many messages it allows. A message goes on a lease
// only when this process knows of one; the conversation's script has the last word.
type sendLeases struct {
	mu sync.Mutex
	m  map[[2]string]localLease
	// seen is what this process last read of conversations in replies of message_send, by
	// sender and recipient: the lease version (bv) and the sender's count of messages there. A
	// grant needs both, read a round trip before its checks.
	seen map[[2]string]seenState
}

type localLease struct {
	until int64 // Unix ms
	left  int64
}

// take reports whether from holds a lease to write to to at now (Unix ms), with a message left
// on it, counting one off; a lease that ends within a second is not taken (a replica's clock
// may be ahead).
func (l *sendLeases) take(from, to string, now int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := [2]string{from, to}
	e, ok := l.m[k]
	if !ok || e.until-now < time.Second.Milliseconds() || e.left <= 0 {
		return false
	}
	e.left--
	l.m[k] = e
	return true
}

// put remembers a lease of from's to write to to, until until (Unix ms), left messages more.
func (l *sendLeases) put(from, to string, until, left, now int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = make(map[[2]string]localLease)
	}
	if len(l.m) >= maxLocalLeases {
		for k, e := range l.m {
			if e.until <= now {
				delete(l.m, k)
			}
		}
		if len(l.m) >= maxLocalLeases {
			clear(l.m)
		}
	}
	l.m[[2]string{from, to}] = localLease{until: until, left: left}
}

// seenState is what a reply of message_send read of a conversation for one of its participants.
type seenState struct {
	bv   string
	sent int64
}

// state is the lease version of the conversation of from and to and from's count of messages
// there, as this process last read them; "-" for none.
func (l *sendLeases) state(from, to string) (bv, sent string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.seen[[2]string{from, to}]; ok {
		return v.bv, strconv.FormatInt(v.sent, 10)
	}
	return "-", "-"
}

// setState remembers what a reply read of the conversation of from and to, for from.
func (l *sendLeases) setState(from, to, bv string, sent int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil || len(l.seen) >= maxLocalLeases {
		l.seen = make(map[[2]string]seenState)
	}
	l.seen[[2]string{from, to}] = seenState{bv: bv, sent: sent}
}

// forget forgets from's lease to write to to.
func (l *sendLeases) forget(from, to string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, [2]string{from, to})
}

// leaseBudget is how many messages a lease granted now allows: what is left of the sender's
// message and write limits once the granting message is counted (used: the attempts in each
// window, that one included), or effectively any number with the limits off.
func (s *Store) leaseBudget(usedMessages, usedWrites int64) int64 {
	if s.opts.WriteLimit < 0 {
		return 1 << 40
	}
	n := int64(s.opts.Messages.PerWindow) - usedMessages
	if s.opts.WriteLimit > 0 {
		n = min(n, int64(s.opts.WriteLimit)-usedWrites)
	}
	return max(n, 0)
}

// leaseCall is the call that ends the leases of the conversation of a and b (message_lease.lua
// "revoke").
func (s *Store) leaseCall(a, b string) scriptCall {
	return scriptCall{name: "message_lease", keys: []string{s.k.conv(a, b)}, args: []any{"revoke", a, b}}
}

// revokeLease ends the send leases of the conversation between u and o, both ways.
func (s *Store) revokeLease(ctx context.Context, u, o string) error {
	a, b := pair(u, o)
	if err := s.runMany(ctx, []scriptCall{s.leaseCall(a, b)}); err != nil {
		return fmt.Errorf("end the send leases of %s: %w", conversationID(a, b), err)
	}
	return nil
}

// dropLease ends from's send lease in the conversation with to (message_lease.lua "drop").
func (s *Store) dropLease(ctx context.Context, from, to string) error {
	s.leases.forget(from, to)
	a, b := pair(from, to)
	return s.runMany(ctx, []scriptCall{{name: "message_lease", keys: []string{s.k.conv(a, b)}, args: []any{"drop", from}}})
}

// revokeBatch is how many conversations revokeSendLeases ends the leases of a round trip.
const revokeBatch = 256

// revokeSendLeases ends the send leases, both ways, of every conversation where uid's lease may
// hold — those its checks noted (lease_note.lua), before they read what ends them — and of every
// conversation of uid's mailbox, its conversations and the requests it holds, where the leases
// of the others with uid are (a lease is granted only in a conversation its recipient accepted,
// which is then among their conversations).
func (s *Store) revokeSendLeases(ctx context.Context, uid string) error {
	mb := s.k.mailbox(uid)
	for _, list := range []string{s.k.msgLeases(uid), mb.convs, mb.reqs} {
		// ZSCAN, not pages by rank: a conversation's activity moves it in the list while the
		// walk runs, and a scan returns every member that stays in it throughout.
		for cursor := uint64(0); ; {
			kv, next, err := s.cmd().ZScan(ctx, list, cursor, "", revokeBatch).Result()
			if err != nil && !errors.Is(err, rdb.Nil) {
				return fmt.Errorf("end the send leases of %s: %w", userID(uid), err)
			}
			calls := make([]scriptCall, 0, len(kv)/2)
			for i := 0; i < len(kv); i += 2 {
				if o := kv[i]; validUserName(o) && o != uid {
					a, b := pair(uid, o)
					calls = append(calls, s.leaseCall(a, b))
				}
			}
			if len(calls) > 0 {
				if err := s.runMany(ctx, calls); err != nil {
					return fmt.Errorf("end the send leases of %s: %w", userID(uid), err)
				}
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	return nil
}

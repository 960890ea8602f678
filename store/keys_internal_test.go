package store

import "testing"

// TestThreadKeys checks that the keys of a thread, built in one allocation each, are the thread's
// prefix (the post's key and ":c:") followed by their own part, as the comment scripts derive
// them: a comment's keys by its short number, whichever form it is given in (layout 6), and
// layout 5's votes hash by the stored form.
func TestThreadKeys(t *testing.T) {
	for _, prefix := range []string{"", "agora:"} {
		k := keys{prefix: prefix}
		const pid, num, short = "17", "000000000004", "4"
		thread := k.post(pid) + ":c:"
		all, key := k.commentIn("m:", pid, num, "\x003")
		vall, vkey, vfield := k.commentVoteIn("f:", pid, "000000000017", "alice")
		postAll, postKey := k.postIn("m:", pid, "\x00t")
		for _, tc := range []struct{ name, got, want string }{
			{"thread", k.thread(pid), thread},
			{"comment", k.comment(pid, num), thread + short},
			{"comment of a short number", k.comment(pid, short), thread + short},
			{"commentVotes", k.commentVotes(pid, num), thread + "v0"},
			{"commentVotes of 17", k.commentVotes(pid, "000000000017"), thread + "v2"},
			{"commentVotes of 8", k.commentVotes(pid, "000000000008"), thread + "v1"},
			{"commentVotes of 7", k.commentVotes(pid, "000000000007"), thread + "v0"},
			{"legacyCommentVotes", k.legacyCommentVotes(pid, num), thread + num + ":votes"},
			{"commentVoteIn", vall, "f:" + thread + "v2\x0017:alice"},
			{"commentVoteIn's key", vkey, k.commentVotes(pid, "000000000017")},
			{"commentVoteIn's field", vfield, "17:alice"},
			{"repliesByTime", k.repliesByTime(pid, num), thread + short + ":rt"},
			{"repliesByTop", k.repliesByTop(pid, num), thread + short + ":rs"},
			{"repliesByBest", k.repliesByBest(pid, num), thread + short + ":rb"},
			{"repliesByControversy", k.repliesByControversy(pid, num), thread + short + ":rc"},
			{"threadIDs", k.threadIDs(pid), thread + "ids"},
			{"commentIdem", k.commentIdem(pid, "ab"), thread + "idem:ab"},
			{"commentIn", all, "m:" + thread + short + "\x003"},
			{"commentIn's key", key, thread + short},
			{"top-level orders", k.repliesByTime(pid, topLevel), thread + "0:rt"},
			{"postIn", postAll, "m:" + k.post(pid) + "\x00t"},
			{"postIn's key", postKey, k.post(pid)},
			{"userIn", k.userIn("m:", "alice"), "m:" + k.user("alice")},
		} {
			if tc.got != tc.want {
				t.Errorf("prefix %q: %s = %q, want %q", prefix, tc.name, tc.got, tc.want)
			}
		}
	}
}

// TestSiteRankingKept checks that the keys of the site's rankings, made once by newKeys, are
// those ranking("") makes, and cost no allocation a call; a group's are made on each call.
func TestSiteRankingKept(t *testing.T) {
	for _, prefix := range []string{"", "agora:"} {
		k := newKeys(prefix)
		if got, want := k.ranking(""), (keys{prefix: prefix}).ranking(""); got != want {
			t.Errorf("prefix %q: the kept site rankings %+v, want %+v", prefix, got, want)
		}
		if got, want := k.ranking("golang"), (keys{prefix: prefix}).ranking("golang"); got != want {
			t.Errorf("prefix %q: a group's rankings %+v, want %+v", prefix, got, want)
		}
		if n := testing.AllocsPerRun(10, func() { _ = k.ranking("") }); n != 0 {
			t.Errorf("prefix %q: ranking(\"\") made %v allocations, want 0", prefix, n)
		}
	}
}

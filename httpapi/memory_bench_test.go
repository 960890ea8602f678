package httpapi_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/internal/rdb"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

// memoryStage is one stage of BenchmarkMemory: how many items it writes, and the GraphQL write of
// item k (its query, variables and the index of the user who sends it).
type memoryStage struct {
	name  string
	count int
	write func(w *memoryWorld, k int) (query string, vars map[string]any, user int)
}

// memoryWorld is what BenchmarkMemory has written so far: the users' tokens, the posts' ids and the
// comments' ids with their posts'.
type memoryWorld struct {
	mu       sync.Mutex // the writers of a stage read and grow it
	tokens   []string
	posts    []string
	comments []memoryComment
}

// record keeps what the answer r to a write of stage created.
func (w *memoryWorld) record(stage, r string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch stage {
	case "user":
		w.tokens = append(w.tokens, field(r, "token"))
	case "post":
		w.posts = append(w.posts, field(r, "id"))
	case "comment":
		ids := fieldAll(r, "id")
		w.comments = append(w.comments, memoryComment{id: ids[0], post: ids[1]})
	}
}

type memoryComment struct{ id, post string }

// memoryText is n bytes of the probe's text for item c (../shared/bench/memory/seed.mjs).
func memoryText(c string, n int) string {
	return strings.Repeat(c+" lorem ipsum dolor sit amet ", n/28+1)[:n]
}

// memoryStages are the stages of ../shared/bench/memory/memory.sh (seed.mjs), with the same shapes:
// sign-ups, posts with 400-byte bodies in 20 groups, comments with 200-byte bodies (every other
// one a reply), and up-votes on posts and on comments by distinct users.
func memoryStages(users, posts, comments, votes, cvotes int) []memoryStage {
	return []memoryStage{
		{"user", users, func(w *memoryWorld, k int) (string, map[string]any, int) {
			return `mutation($n:String!){signUp(name:$n,password:"correct horse battery"){token}}`,
				map[string]any{"n": fmt.Sprintf("m%d_12345", k)}, -1
		}},
		{"post", posts, func(w *memoryWorld, k int) (string, map[string]any, int) {
			return `mutation($t:String!,$b:String!,$g:[String!]){createPost(input:{title:$t,body:$b,groups:$g}){id}}`,
				map[string]any{"t": fmt.Sprintf("post number %d about things", k), "b": memoryText("p"+strconv.Itoa(k), 400),
					"g": []string{fmt.Sprint("group", k%20)}}, k
		}},
		{"comment", comments, func(w *memoryWorld, k int) (string, map[string]any, int) {
			if k%2 == 1 && len(w.comments) > 10 {
				parent := w.comments[(k*7919)%len(w.comments)]
				return `mutation($p:ID!,$r:ID!,$b:String!){createComment(postId:$p,parentId:$r,body:$b){id post{id}}}`,
					map[string]any{"p": parent.post, "r": parent.id, "b": memoryText("c"+strconv.Itoa(k), 200)}, k * 31
			}
			return `mutation($p:ID!,$b:String!){createComment(postId:$p,body:$b){id post{id}}}`,
				map[string]any{"p": w.posts[(k*17)%len(w.posts)], "b": memoryText("c"+strconv.Itoa(k), 200)}, k * 31
		}},
		{"post vote", votes, func(w *memoryWorld, k int) (string, map[string]any, int) {
			nu := len(w.tokens)
			return `mutation($p:ID!){votePost(postId:$p,direction:UP){upvotes}}`,
				map[string]any{"p": w.posts[((k/nu)*7+k)%len(w.posts)]}, k
		}},
		{"comment vote", cvotes, func(w *memoryWorld, k int) (string, map[string]any, int) {
			nu := len(w.tokens)
			return `mutation($c:ID!){voteComment(commentId:$c,direction:UP){upvotes}}`,
				map[string]any{"c": w.comments[((k/nu)*13+k)%len(w.comments)].id}, k
		}},
	}
}

// memoryCount reads a size of BenchmarkMemory from the environment (MEMORY_USERS, …), or def.
func memoryCount(b *testing.B, name string, def int) int {
	v := os.Getenv("MEMORY_" + name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("MEMORY_%s=%q: want a positive count", name, v)
	}
	return n
}

// usedMemory returns Redis's used_memory less its clients' buffers, and the bytes its live-event
// logs (streams) take, by MEMORY USAGE of every stream.
func usedMemory(b *testing.B, c rdb.UniversalClient) (used, logs int64) {
	ctx := context.Background()
	info, err := c.Info(ctx, "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	// Client buffers are not data: the connections the server opens as the load grows would
	// otherwise count as the first stage's items.
	for _, line := range strings.Split(info, "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "used_memory":
			used += n
		case "mem_clients_normal", "mem_clients_slaves":
			used -= n
		}
	}
	iter := c.ScanType(ctx, 0, "*", 1000, "stream").Iterator()
	for iter.Next(ctx) {
		n, err := c.MemoryUsage(ctx, iter.Val(), 0).Result()
		if err != nil {
			b.Fatal(err)
		}
		logs += n
	}
	if err := iter.Err(); err != nil {
		b.Fatal(err)
	}
	return used, logs
}

// BenchmarkMemory writes a community through the API (the handler, in process) into a redis-server
// of its own, in the stages of ../shared/bench/memory/memory.sh, and reports the bytes of Redis
// memory (used_memory) each user, post, comment, post vote and comment vote adds: at rest (the
// live-event logs left out, as memory.sh's AT_REST=1 does, by their MEMORY USAGE) and with the
// logs. It runs once whatever -benchtime says. The sizes are memory.sh's (500 users, 2,000 posts,
// 20,000 comments, 40,000 votes of each kind: a few minutes) unless MEMORY_USERS, MEMORY_POSTS,
// MEMORY_COMMENTS, MEMORY_VOTES or MEMORY_CVOTES say otherwise; far fewer items make the per-item
// figures grow, as structures every site has (the search index's parts, the rankings) are shared
// by fewer items:
//
//	go test ./httpapi -run '^$' -bench Memory -benchtime 1x -timeout 30m
func BenchmarkMemory(b *testing.B) {
	// Redis's per-command latency histograms (24,688 bytes each, allocated the first time a
	// command runs) are the server's fixed cost, not the first stage's items': off on this private
	// server, as docs/PERFORMANCE.md ("Redis's own fixed costs") reports them apart.
	srv := storetest.PrivateServer(b, "--latency-tracking", "no")
	client := rdb.NewPlainClient(&rdb.Options{Addr: srv.Addr})
	b.Cleanup(func() { _ = client.Close() })
	// The real password cost, so that a user's hash is what a deployment stores.
	st := storetest.Backend{Name: "redis", Client: client}.NewStore(b, store.Options{Password: store.DefaultPasswordParams})
	h := httpapi.New(httpapi.Config{Store: st, Hub: newHub(b, st), ResponseCacheMiB: -1})
	stages := memoryStages(memoryCount(b, "USERS", 500), memoryCount(b, "POSTS", 2000), memoryCount(b, "COMMENTS", 20000),
		memoryCount(b, "VOTES", 40000), memoryCount(b, "CVOTES", 40000))
	w := &memoryWorld{}
	used0, logs0 := usedMemory(b, client)
	b.ResetTimer()
	for _, stage := range stages {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for k := int(next.Add(1)) - 1; k < stage.count; k = int(next.Add(1)) - 1 {
					w.mu.Lock()
					q, vars, u := stage.write(w, k)
					token := ""
					if u >= 0 {
						token = w.tokens[u%len(w.tokens)]
					}
					w.mu.Unlock()
					r := string(raw(b, h, token, q, vars))
					if strings.Contains(r, `"errors"`) {
						if !strings.Contains(r, `"FORBIDDEN"`) { // a vote on one's own item: not counted
							b.Errorf("%s %d: %s", stage.name, k, r)
							return
						}
						continue
					}
					w.record(stage.name, r)
				}
			})
		}
		wg.Wait()
		if b.Failed() {
			b.FailNow()
		}
		// What a server's job engine has run by the time the stage is over (the notifications'
		// deliveries, the feeds' pushes): a job still in its queue is not what an item costs at
		// rest, and ../shared/bench/memory/memory.sh measures a running server.
		if _, err := st.Jobs().RunDue(context.Background()); err != nil {
			b.Fatal(err)
		}
		used, logs := usedMemory(b, client)
		n := float64(stage.count)
		unit := strings.ReplaceAll(stage.name, " ", "-")
		b.ReportMetric(float64((used-logs)-(used0-logs0))/n, "B/"+unit)
		b.ReportMetric(float64(used-used0)/n, "B/"+unit+"-with-logs")
		used0, logs0 = used, logs
	}
}

// field returns the first string value of name in a JSON response, or "".
func field(r, name string) string {
	if all := fieldAll(r, name); len(all) > 0 {
		return all[0]
	}
	return ""
}

// fieldAll returns every string value of name in a JSON response, in order.
func fieldAll(r, name string) []string {
	var out []string
	key := `"` + name + `":"`
	for {
		i := strings.Index(r, key)
		if i < 0 {
			return out
		}
		r = r[i+len(key):]
		j := strings.IndexByte(r, '"')
		if j < 0 {
			return out
		}
		out = append(out, r[:j])
		r = r[j:]
	}
}

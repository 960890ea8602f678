package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agora/agora/httpapi"
	"github.com/agora/agora/store"
	"github.com/agora/agora/store/storetest"
)

func TestTracing(t *testing.T) {
	b := storetest.Backends(t)[0]
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	st := b.NewStore(t, store.Options{})
	hub := newHub(t, st)
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Store: st, Hub: hub, Tracing: tp, ResponseCacheMiB: -1}))
	t.Cleanup(srv.Close)
	a := &api{t: t, srv: srv, store: st, hub: hub}
	token, _ := a.signUp("traced")
	id := a.createPost(token, "traced post")
	exp.Reset()

	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	raw, _ := json.Marshal(map[string]any{"query": `query Read($id: ID!) { post(id: $id) { title author { name } } }`, "variables": map[string]any{"id": id}})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/query", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-"+parentID+"-01")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
		if s.SpanContext.TraceID().String() != traceID {
			t.Errorf("span %s is in trace %s, not the request's", s.Name, s.SpanContext.TraceID())
		}
	}
	op, ok := byName["query Read"]
	if !ok {
		t.Fatalf("no operation span among %d: %v", len(spans), names(spans))
	}
	if op.Parent.SpanID().String() != parentID {
		t.Errorf("the operation's parent is %s, want the traceparent's %s", op.Parent.SpanID(), parentID)
	}
	field, ok := byName["Query.post"]
	if !ok || field.Parent.SpanID() != op.SpanContext.SpanID() {
		t.Errorf("no span of the post resolver under the operation: %v", names(spans))
	}
	pipelines := 0
	for _, s := range spans {
		if s.Name == "redis pipeline" {
			pipelines++
		}
	}
	if pipelines == 0 {
		t.Errorf("no Redis pipeline spans: %v", names(spans))
	}
	if _, ok := byName["Post.title"]; ok {
		t.Error("a span for a plain field, which has no resolver")
	}

	exp.Reset()
	a.do("", `query Bad { posts(first: 0) { totalCount } }`, nil)
	bad := exp.GetSpans()
	if len(bad) == 0 || bad[len(bad)-1].Status.Description != "BAD_USER_INPUT" {
		t.Errorf("the failed operation's span: %+v", bad)
	}
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestREADMEExamples runs the examples of the documentation — README.md, then the files of
// readmeDocs in their order — in the order they appear, against a fresh server (the program
// itself, as `go run .` starts it, on its embedded Redis), and then a second time against the
// same server: a reader may run them twice.
//
// Which blocks run, and how:
//
//   - Every ```graphql block is parsed and validated against schema.graphqls. Unless it is marked
//     not-run, each of its operations is then sent in order (by operationName when the block
//     holds several, as GraphiQL does when one is picked): queries and mutations with POST /query,
//     which must answer 200 without errors; subscriptions over server-sent events, which must open
//     (200, text/event-stream) and send no error for readmeStreamWait.
//   - A ```sh block runs when it names the server, http://localhost:8080 (replaced by the test
//     server's address), and is not marked not-run: `bash -euo pipefail -c <block>`, which must
//     exit 0 and print no "errors". Any other sh block — the two commands, benchmarks,
//     deployment — is shell for the reader's machine, not an example against the server: it is
//     skipped, and the skip is logged with its line. Without bash or curl the sh blocks are
//     skipped with a message saying so.
//   - Other fences (the package layout, …) are not examples.
//
// Markers are HTML comments (invisible on GitHub), each alone on a line just before the fence;
// only blank lines and other markers may come between them and the fence:
//
//	<!-- as: alice -->                    run the block with a session of alice (below)
//	<!-- variables: {"id": "post:1"} -->  send these variables with each operation; the prose
//	                                      before the block must show them as written, in backquotes
//	<!-- either -->                       the operations are alternatives (sign up, or log in when
//	                                      the name is taken): the first one without errors counts
//	<!-- not-run: why -->                 validate only (graphql) or skip (sh), saying why
//
// A block without `as` runs anonymously. For `as: NAME` the test gets NAME a session the way the
// README tells a reader to: log in with the README's password ("correct horse"), or sign up when
// that fails; sessions are kept for the rest of the pass. Unknown markers fail the test.
func TestREADMEExamples(t *testing.T) {
	var blocks []readmeBlock
	for _, file := range readmeDocs {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		bs, err := readmeBlocks(file, string(src))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	schema := loadSchema(t)

	// Every graphql block is valid against the schema, whether it runs or not.
	docs := map[string]*ast.QueryDocument{}
	for _, b := range blocks {
		if b.lang != "graphql" {
			continue
		}
		doc, errs := gqlparser.LoadQuery(schema, b.text)
		if errs != nil {
			t.Errorf("%s:%d: the graphql block is not valid against the schema: %v", b.file, b.line, errs)
			continue
		}
		docs[b.pos()] = doc
	}
	if t.Failed() {
		t.FailNow()
	}

	_, bashErr := exec.LookPath("bash")
	_, curlErr := exec.LookPath("curl")
	srv := start(t, nil)
	for pass := 1; pass <= 2; pass++ {
		r := &readmeRun{t: t, url: srv.url, tokens: map[string]string{}}
		for _, b := range blocks {
			name := fmt.Sprintf("pass%d/%s/%s/L%d", pass, strings.TrimSuffix(filepath.Base(b.file), ".md"), b.lang, b.line)
			t.Run(name, func(t *testing.T) {
				r.t = t
				switch {
				case b.notRun != "":
					t.Skipf("%s (%s): marked not-run: %s", b.pos(), b.section, b.notRun)
				case b.lang == "graphql":
					r.graphql(b, docs[b.pos()])
				case !strings.Contains(b.text, readmeServer):
					t.Skipf("%s (%s): a sh block that does not name %s is not run against the server: %s",
						b.pos(), b.section, readmeServer, firstLine(b.text))
				case bashErr != nil || curlErr != nil:
					t.Skipf("%s: the sh examples need bash and curl: %v %v", b.pos(), bashErr, curlErr)
				default:
					r.sh(b)
				}
			})
		}
	}
	if t.Failed() {
		t.Logf("server log:\n%s", srv.out)
	}
}

// readmeDocs are the documents whose examples TestREADMEExamples checks, in the order they run:
// the README's first session signs up the users that the API's examples go on with.
var readmeDocs = []string{"README.md", "docs/API.md", "docs/OPERATIONS.md", "docs/ARCHITECTURE.md", "docs/PERFORMANCE.md"}

// readmeServer is the address the README's examples use; the test replaces it by its server's.
const readmeServer = "http://localhost:8080"

// readmePassword is the password the README signs its users up with.
const readmePassword = "correct horse"

// readmeStreamWait is how long a subscription must stay open without an error.
const readmeStreamWait = 300 * time.Millisecond

// readmeBlock is one fenced block of a document with the markers before it.
type readmeBlock struct {
	file    string // the document's path, from the repository's root
	lang    string // the fence's info string: "graphql", "sh"
	line    int    // line of the opening fence, from 1
	section string // the heading it is under
	text    string
	prose   string // the text between the previous fence and this one
	as      string
	vars    string // JSON object, or ""
	either  bool
	notRun  string // why it is not run, or ""
}

var readmeMarker = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)

// pos is where the block starts: file:line.
func (b readmeBlock) pos() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// readmeBlocks returns the graphql and sh blocks of the document file, whose text is src, with
// their markers.
func readmeBlocks(file, src string) ([]readmeBlock, error) {
	var (
		blocks  []readmeBlock
		cur     *readmeBlock
		pending readmeBlock // markers seen since the last line of prose
		prose   strings.Builder
		section string
	)
	for i, line := range strings.Split(src, "\n") {
		switch {
		case cur != nil && line == "```":
			if cur.lang == "graphql" || cur.lang == "sh" {
				blocks = append(blocks, *cur)
			}
			cur = nil
			pending = readmeBlock{}
			prose.Reset()
		case cur != nil:
			cur.text += line + "\n"
		case strings.HasPrefix(line, "```"):
			b := pending
			b.file, b.lang, b.line, b.section, b.prose = file, strings.TrimSpace(line[3:]), i+1, section, prose.String()
			cur = &b
		case readmeMarker.MatchString(line):
			key, val, _ := strings.Cut(readmeMarker.FindStringSubmatch(line)[1], ":")
			val = strings.TrimSpace(val)
			switch strings.TrimSpace(key) {
			case "as":
				pending.as = val
			case "variables":
				if !json.Valid([]byte(val)) {
					return nil, fmt.Errorf("%s:%d: the variables are not JSON: %s", file, i+1, val)
				}
				pending.vars = val
			case "either":
				pending.either = true
			case "not-run":
				if val == "" {
					val = "(no reason given)"
				}
				pending.notRun = val
			default:
				return nil, fmt.Errorf("%s:%d: unknown marker %q (TestREADMEExamples knows as, variables, either, not-run)", file, i+1, line)
			}
		case strings.TrimSpace(line) == "":
			prose.WriteString("\n")
		default:
			if strings.HasPrefix(line, "#") {
				section = strings.TrimSpace(strings.TrimLeft(line, "#"))
			}
			if pending != (readmeBlock{}) {
				return nil, fmt.Errorf("%s:%d: a marker must come just before a fence, not before %q", file, i+1, line)
			}
			prose.WriteString(line + "\n")
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("%s: the fence is not closed", cur.pos())
	}
	for _, b := range blocks {
		if b.vars != "" && !strings.Contains(b.prose, "`"+b.vars+"`") {
			return nil, fmt.Errorf("%s: the prose before the block must show its variables as `%s`", b.pos(), b.vars)
		}
	}
	return blocks, nil
}

// readmeRun is one pass over the documents' examples against the server at url.
type readmeRun struct {
	t      *testing.T
	url    string
	tokens map[string]string // name → session token
}

// graphql runs the operations of one graphql block.
func (r *readmeRun) graphql(b readmeBlock, doc *ast.QueryDocument) {
	t := r.t
	token := ""
	if b.as != "" {
		token = r.token(b.as)
	}
	var vars map[string]any
	if b.vars != "" {
		if err := json.Unmarshal([]byte(b.vars), &vars); err != nil {
			t.Fatal(err)
		}
	}
	var failures []string
	for _, op := range doc.Operations {
		name := ""
		if len(doc.Operations) > 1 {
			name = op.Name
		}
		var err error
		if op.Operation == ast.Subscription {
			err = r.subscribe(token, b.text, name, vars)
		} else {
			_, err = r.post(token, b.text, name, vars)
		}
		switch {
		case err == nil && b.either:
			t.Logf("%s: ran %s (of the alternatives)", b.pos(), op.Name)
			return
		case err == nil:
			continue
		case b.either:
			failures = append(failures, fmt.Sprintf("%s: %v", op.Name, err))
		default:
			t.Errorf("%s (%s): operation %q: %v\n%s", b.pos(), b.section, op.Name, err, b.text)
		}
	}
	if b.either {
		t.Errorf("%s (%s): none of the alternatives ran: %s", b.pos(), b.section, strings.Join(failures, "; "))
	}
}

// post sends one query or mutation and returns its data, or an error if the answer is not a 200
// without errors.
func (r *readmeRun) post(token, query, opName string, vars map[string]any) (json.RawMessage, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "operationName": opName, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, r.url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []any           `json:"errors"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("status %d, not JSON: %s", res.StatusCode, raw)
	}
	if res.StatusCode != http.StatusOK || len(out.Errors) > 0 || len(out.Data) == 0 || string(out.Data) == "null" {
		return nil, fmt.Errorf("status %d: %s", res.StatusCode, raw)
	}
	return out.Data, nil
}

// subscribe opens a subscription over server-sent events and checks that it stays open without
// an error for readmeStreamWait.
func (r *readmeRun) subscribe(token, query, opName string, vars map[string]any) error {
	ctx, cancel := context.WithTimeout(context.Background(), readmeStreamWait)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"query": query, "operationName": opName, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, r.url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	var got strings.Builder
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		got.WriteString(sc.Text() + "\n")
	}
	if err := sc.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("reading the stream: %v", err)
	}
	switch {
	case res.StatusCode != http.StatusOK:
		return fmt.Errorf("status %d: %s", res.StatusCode, got.String())
	case !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream"):
		return fmt.Errorf("Content-Type %q: %s", res.Header.Get("Content-Type"), got.String())
	case strings.Contains(got.String(), `"errors"`):
		return fmt.Errorf("the stream sent an error: %s", got.String())
	case ctx.Err() == nil:
		return fmt.Errorf("the stream ended within %s: %s", readmeStreamWait, got.String())
	}
	return nil
}

// token returns a session of name: log in with the README's password, or sign up.
func (r *readmeRun) token(name string) string {
	if tok, ok := r.tokens[name]; ok {
		return tok
	}
	vars := map[string]any{"n": name, "p": readmePassword}
	var tok struct {
		LogIn, SignUp struct{ Token string }
	}
	data, err := r.post("", `mutation($n: String!, $p: String!) { logIn(name: $n, password: $p) { token } }`, "", vars)
	if err != nil {
		data, err = r.post("", `mutation($n: String!, $p: String!) { signUp(name: $n, password: $p) { token } }`, "", vars)
	}
	if err != nil {
		r.t.Fatalf("no session for %s: %v", name, err)
	}
	if err := json.Unmarshal(data, &tok); err != nil || tok.LogIn.Token+tok.SignUp.Token == "" {
		r.t.Fatalf("no token for %s in %s", name, data)
	}
	r.tokens[name] = tok.LogIn.Token + tok.SignUp.Token
	return r.tokens[name]
}

// sh runs one sh block with bash against the test server.
func (r *readmeRun) sh(b readmeBlock) {
	t := r.t
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := strings.ReplaceAll(b.text, readmeServer, r.url)
	out, err := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script).CombinedOutput()
	t.Logf("%s output:\n%s", b.pos(), out)
	if err != nil {
		t.Errorf("%s (%s): bash: %v\n%s", b.pos(), b.section, err, out)
	}
	if bytes.Contains(out, []byte(`"errors"`)) {
		t.Errorf("%s (%s): the output holds errors:\n%s", b.pos(), b.section, out)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// loadSchema parses the schema as gqlgen.yml names it: schema.graphqls and every file in schema/.
func loadSchema(t *testing.T) *ast.Schema {
	t.Helper()
	files, err := filepath.Glob("schema/*.graphqls")
	if err != nil {
		t.Fatal(err)
	}
	var sources []*ast.Source
	for _, f := range append([]string{"schema.graphqls"}, files...) {
		sdl, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, &ast.Source{Name: f, Input: string(sdl)})
	}
	schema, gerr := gqlparser.LoadSchema(sources...)
	if gerr != nil {
		t.Fatalf("the schema: %v", gerr)
	}
	return schema
}

package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
)

// More WebSocket close codes of graphql-transport-ws (see the constants in live.go).
const (
	CloseUnauthorized      = 4401 // an operation before connection_init
	CloseSubscriberExists  = 4409 // an operation id that is already in use
	CloseTooManyInitialise = 4429 // a second connection_init
)

// transportWSProtocol is the subprotocol whose rules transportWSGuard enforces.
const transportWSProtocol = "graphql-transport-ws"

// transportWSGuard enforces the rules of graphql-transport-ws (PROTOCOL.md of graphql-ws) that
// gqlgen's transport does not: it sees every message in both directions on one socket, before
// gqlgen reads it and after gqlgen writes it.
//
//   - A message that is not one the client may send, or lacks what its type requires, closes the
//     socket with 4400; subscribe before connection_init with 4401; a second connection_init
//     with 4429; subscribe with an id still in use with 4409.
//   - ping and pong are allowed at any time: before connection_init the guard answers a ping
//     itself (gqlgen would close the socket).
//   - After the client's complete for an id, the server sends nothing more for it (gqlgen ends
//     the stream with a complete or error of its own, which the guard drops), and the id may be
//     used again once the old stream has ended: a subscribe that reuses it waits for that.
//   - After an error for an id no complete follows (gqlgen sends both when an operation fails to
//     parse or validate).
type transportWSGuard struct {
	reuseWait time.Duration // how long a subscribe waits for the old stream of a reused id

	mu      sync.Mutex
	inited  bool
	ids     map[string]*opState
	errored map[string]bool // ids that just got an error; their trailing complete is dropped
}

// opState is an operation id in use.
type opState struct {
	stopped bool          // the client sent complete
	ended   chan struct{} // closed when the server has ended the operation
}

// clientMsg is the part of a client message the guard checks.
type clientMsg struct {
	ID      *string         `json:"id"`
	Type    *string         `json:"type"`
	Payload json.RawMessage `json:"payload"`
}

// guardVerdict says what the socket does with a client message.
type guardVerdict struct {
	pass   bool   // hand the message to gqlgen
	reply  []byte // a message to send back (pong before connection_init)
	close  int    // close the socket with this code
	reason string
}

func newTransportWSGuard(reuseWait time.Duration) *transportWSGuard {
	return &transportWSGuard{reuseWait: reuseWait, ids: map[string]*opState{}, errored: map[string]bool{}}
}

// incoming checks a message from the client. It may wait for an id's old stream to end.
func (g *transportWSGuard) incoming(data []byte) guardVerdict {
	var m clientMsg
	if err := json.Unmarshal(data, &m); err != nil || m.Type == nil {
		return invalid("a message must be a JSON object with a type")
	}
	g.mu.Lock()
	// gqlgen writes the complete that may follow an error before it reads the next message.
	clear(g.errored)
	inited := g.inited
	g.mu.Unlock()

	switch typ := *m.Type; typ {
	case "ping":
		if !inited {
			return guardVerdict{reply: pong(m.Payload)}
		}
		return guardVerdict{pass: true}
	case "pong":
		return guardVerdict{pass: inited}
	case "connection_init":
		if !isObjectOrAbsent(m.Payload) {
			return invalid("the payload of connection_init must be an object")
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.inited {
			return guardVerdict{close: CloseTooManyInitialise, reason: "Too many initialisation requests"}
		}
		g.inited = true
		return guardVerdict{pass: true}
	case "subscribe":
		if !inited {
			return guardVerdict{close: CloseUnauthorized, reason: "Unauthorized"}
		}
		if m.ID == nil || *m.ID == "" {
			return invalid("subscribe needs an id")
		}
		var p struct {
			Query *string `json:"query"`
		}
		if len(m.Payload) == 0 || json.Unmarshal(m.Payload, &p) != nil || p.Query == nil {
			return invalid("the payload of subscribe must be an object with a query")
		}
		return g.subscribe(*m.ID)
	case "complete":
		if m.ID == nil || *m.ID == "" {
			return invalid("complete needs an id")
		}
		g.mu.Lock()
		defer g.mu.Unlock()
		op := g.ids[*m.ID]
		if op == nil || op.stopped {
			return guardVerdict{} // nothing is running under that id
		}
		op.stopped = true
		return guardVerdict{pass: true}
	default:
		return invalid(fmt.Sprintf("a client may not send a message of type %q", typ))
	}
}

// subscribe reserves id, waiting up to reuseWait for a stream the client completed under the
// same id to end.
func (g *transportWSGuard) subscribe(id string) guardVerdict {
	g.mu.Lock()
	op := g.ids[id]
	if op != nil && op.stopped {
		g.mu.Unlock()
		select {
		case <-op.ended:
		case <-time.After(g.reuseWait):
		}
		g.mu.Lock()
		op = g.ids[id]
	}
	defer g.mu.Unlock()
	if op != nil {
		return guardVerdict{close: CloseSubscriberExists, reason: truncateReason("Subscriber for " + id + " already exists")}
	}
	g.ids[id] = &opState{ended: make(chan struct{})}
	return guardVerdict{pass: true}
}

// outgoing sees a message gqlgen is about to send, marshaled, and reports whether to send it.
// gqlgen marshals a message with its type last, so complete and error are recognised by their
// ending (TestTransportWSConversation fails if that changes); only those two are decoded.
func (g *transportWSGuard) outgoing(data []byte) bool {
	isComplete := bytes.HasSuffix(data, []byte(`"type":"complete"}`))
	isError := !isComplete && bytes.HasSuffix(data, []byte(`"type":"error"}`))
	if !isComplete && !isError {
		return true
	}
	var m struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(data, &m) != nil {
		return true
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	op := g.ids[m.ID]
	if op == nil {
		// A complete after an error, or for an id whose stream already ended.
		return !(isComplete && g.errored[m.ID])
	}
	delete(g.ids, m.ID)
	close(op.ended)
	if isError {
		g.errored[m.ID] = true
	}
	return !op.stopped // the client completed it: nothing more is sent for it
}

func invalid(why string) guardVerdict {
	return guardVerdict{close: CloseInvalidMessage, reason: truncateReason("Invalid message: " + why)}
}

// pong is the answer to a ping, echoing its payload.
func pong(payload json.RawMessage) []byte {
	b, _ := json.Marshal(struct {
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload,omitempty"`
	}{"pong", payload})
	return b
}

// isObjectOrAbsent reports whether a payload is missing, null or a JSON object.
func isObjectOrAbsent(p json.RawMessage) bool {
	p = bytes.TrimSpace(p)
	if len(p) == 0 || string(p) == "null" {
		return true
	}
	var obj map[string]json.RawMessage
	return p[0] == '{' && json.Unmarshal(p, &obj) == nil
}

// truncateReason keeps a close reason within the 123 bytes a close frame allows.
func truncateReason(s string) string {
	if len(s) <= 123 {
		return s
	}
	return strings.ToValidUTF8(s[:120], "") + "..."
}

package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/agora/agora/resolvers"
)

// wsOp is an operation running on a WebSocket under the client's id.
type wsOp struct {
	id      string
	result  []byte // the start of its result messages: {"id":"<id>","type":"next","payload":
	cancel  context.CancelFunc
	stopped atomic.Bool   // the client ended it
	ending  atomic.Bool   // its last message is being sent: the id is as good as free
	ended   chan struct{} // closed when the operation has sent its last message
}

// start starts the operation the client sent under id. It runs on a goroutine of its own; one
// that cannot start (its document does not parse or validate, a limit refuses it) is answered
// here, before the next message is read.
func (c *wsConn) start(id string, payload json.RawMessage) *wsClose {
	ctx, cancel := context.WithCancel(c.ctx)
	op := &wsOp{id: id, result: opPrefix(id, c.proto.resultType()), cancel: cancel, ended: make(chan struct{})}
	if cl := c.reserve(op); cl != nil {
		cancel()
		return cl
	}
	begin := graphql.Now()
	ctx = graphql.StartOperationTrace(ctx)
	params := &graphql.RawParams{}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(params); err != nil {
		c.finish(op, gqlerror.List{limitError(CodeBadUserInput,
			"the payload of subscribe is not a GraphQL request: variables and extensions must be objects, operationName a string")})
		return nil
	}
	params.ReadTime = graphql.TraceTiming{Start: begin, End: graphql.Now()}
	params.Headers = c.header
	rc, errs := c.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		errs = capRequestErrors(errs)
		resp := c.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			c.finish(op, resp.Errors) // the document does not parse or validate: error
			return nil
		}
		c.sendResult(op, &graphql.Response{Errors: errs}, nil)
		c.finish(op, nil)
		return nil
	}
	var release func()
	if rc.Operation.Operation != ast.Subscription {
		// Wait, without reading the next message, until fewer than MaxSocketOperations queries
		// and mutations run: a burst of them on one socket runs a few at a time.
		select {
		case c.slots <- struct{}{}:
			release = func() { <-c.slots }
		case <-ctx.Done(): // the socket is ending
			c.finish(op, nil)
			return nil
		}
	}
	c.ops.Add(1)
	go func() {
		if release != nil {
			defer release()
		}
		c.run(graphql.WithOperationContext(ctx, rc), op, rc)
	}()
	return nil
}

// reserve registers op under its id. On graphql-transport-ws an id in use closes the socket
// with 4409; on graphql-ws the operation running under it is stopped. An id whose operation the
// client has stopped, or whose last message (complete, error) is on its way, may be used again
// once that operation has ended: reserve waits for it, up to the write timeout. A client may
// reuse an id as soon as it has read its complete, which finish sends before it forgets the id.
func (c *wsConn) reserve(op *wsOp) *wsClose {
	c.mu.Lock()
	old := c.running[op.id]
	if old != nil && (old.stopped.Load() || old.ending.Load() || c.proto == legacyWS) {
		old.cancel()
		c.mu.Unlock()
		select {
		case <-old.ended:
		case <-time.After(c.cfg.Live.WriteTimeout):
		}
		c.mu.Lock()
		old = c.running[op.id]
	}
	defer c.mu.Unlock()
	if old != nil {
		return &wsClose{code: CloseSubscriberExists, reason: truncateReason("Subscriber for " + op.id + " already exists")}
	}
	c.running[op.id] = op
	return nil
}

// stop ends the operation the client stopped. On graphql-transport-ws nothing more is sent for
// it; on graphql-ws its complete still comes.
func (c *wsConn) stop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if op := c.running[id]; op != nil && !op.stopped.Swap(true) {
		op.cancel()
	}
}

// run runs an operation and writes its results. Each result of a shared subscription comes with
// its encoding (resolvers.Encoded), which is written as it is; any other is encoded here.
func (c *wsConn) run(ctx context.Context, op *wsOp, rc *graphql.OperationContext) {
	defer c.ops.Done()
	var errs gqlerror.List
	defer func() {
		if r := recover(); r != nil {
			var gqlErr *gqlerror.Error
			if err := rc.Recover(ctx, r); !errors.As(err, &gqlErr) {
				gqlErr = limitError(CodeInternal, "internal server error") // the panic is logged
			}
			errs = gqlerror.List{gqlErr}
		}
		c.finish(op, errs)
	}()
	var enc resolvers.Encoded
	responses, ctx := c.exec.DispatchOperation(resolvers.WithEncoded(ctx, &enc), rc)
	for {
		resp := responses(ctx)
		if resp == nil {
			return
		}
		if err := c.sendResult(op, resp, enc.Take()); err != nil {
			c.cfg.Log.ErrorContext(ctx, "websocket result", "err", err)
			errs = gqlerror.List{limitError(CodeInternal, "internal server error")}
			return
		}
	}
}

// sendResult writes a result of op: payload, the response's encoding, or else the response
// encoded here.
func (c *wsConn) sendResult(op *wsOp, resp *graphql.Response, payload []byte) error {
	if payload == nil {
		var err error
		if payload, err = encodeResponse(resp); err != nil {
			return fmt.Errorf("encode the response: %w", err)
		}
	}
	if c.silenced(op) {
		return nil
	}
	c.sendAround(op.result, payload)
	return nil
}

// finish sends the last message of op — error with errs, or complete — and forgets it. On
// graphql-transport-ws no complete follows an error, and nothing is sent after the client's
// complete; on graphql-ws complete always ends an operation.
func (c *wsConn) finish(op *wsOp, errs gqlerror.List) {
	op.ending.Store(true) // before the complete: a client that reads it may send the id again
	if !c.silenced(op) {
		if len(errs) > 0 {
			b, _ := json.Marshal(errs)
			c.send(opMsg(op.id, "error", b))
		}
		if len(errs) == 0 || c.proto == legacyWS {
			c.send(opMsg(op.id, "complete", nil))
		}
	}
	c.mu.Lock()
	if c.running[op.id] == op {
		delete(c.running, op.id)
	}
	c.mu.Unlock()
	close(op.ended)
	op.cancel()
}

// silenced reports whether nothing more may be sent for op: the client completed it on
// graphql-transport-ws.
func (c *wsConn) silenced(op *wsOp) bool {
	return c.proto == transportWS && op.stopped.Load()
}

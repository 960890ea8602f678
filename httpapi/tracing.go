package httpapi

import (
	"context"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// OpenTelemetry tracing, on when Config.Tracing is set (server.go sets it from the standard
// OTEL_* variables): a span per operation, continuing the trace of the request's traceparent,
// with a child span for every field whose resolver runs (the fields that fetch; plain data is
// marshalled inline and gets none) and, from the store, one for each Redis pipeline. Off, none of
// it runs: no field middleware is installed.

// tracing starts the spans of operations and resolvers.
type tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

func newTracing(tp trace.TracerProvider) *tracing {
	if tp == nil {
		return nil
	}
	return &tracing{
		tracer: tp.Tracer("github.com/agora/agora/httpapi"),
		prop:   propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}),
	}
}

// extract continues the trace the request's traceparent header names, if any.
func (t *tracing) extract(ctx context.Context, r *http.Request) context.Context {
	if t == nil {
		return ctx
	}
	return t.prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
}

// aroundOperations makes a span of each operation: a query or mutation's ends with its response,
// a subscription's when the subscription ends.
func (t *tracing) aroundOperations(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil {
		return next(ctx)
	}
	typ := string(oc.Operation.Operation)
	name := typ
	if n := oc.Operation.Name; n != "" && len(n) <= maxOperationNameLen {
		name += " " + n
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("graphql.operation.type", typ),
		attribute.String("graphql.operation.name", truncate(oc.Operation.Name, maxOperationNameLen)),
	))
	if oc.Operation.Operation == ast.Subscription {
		context.AfterFunc(ctx, func() { span.End() })
		return next(ctx)
	}
	h := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if resp != nil && len(resp.Errors) > 0 {
			code := errorCode(resp.Errors[0])
			span.SetAttributes(attribute.String("graphql.error.code", code))
			span.SetStatus(codes.Error, code)
		}
		span.End()
		return resp
	}
}

// aroundFields makes a span of each field whose resolver runs.
func (t *tracing) aroundFields(ctx context.Context, next graphql.Resolver) (any, error) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !fc.IsResolver {
		return next(ctx)
	}
	ctx, span := t.tracer.Start(ctx, fc.Object+"."+fc.Field.Name, trace.WithAttributes(
		attribute.String("graphql.field.path", fc.Path().String()),
	))
	defer span.End()
	v, err := next(ctx)
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	return v, err
}

// truncate cuts s to at most n bytes.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/orchestrator"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// CustomProtocols is what the server needs of the protocols tenants
// register as data (package protocols/custom implements it). Every method
// is scoped to the tenant of ctx.
type CustomProtocols interface {
	// Register validates and stores a document; its errors are
	// *debate.ValidationError (paths into the document),
	// debate.ErrAlreadyExists or internal ones.
	Register(ctx context.Context, raw []byte) (debate.ProtocolDocument, bool, error)
	// Get returns a document (version 0: the latest) or debate.ErrNotFound.
	Get(ctx context.Context, name string, version int) (debate.ProtocolDocument, error)
	// List returns the tenant's documents.
	List(ctx context.Context) ([]debate.ProtocolDocument, error)
	// Protocol compiles the document NAME@VERSION.
	Protocol(ctx context.Context, ref string) (*orchestrator.Protocol, error)
	// CheckRunnable returns debate.ErrFailedPrecondition when the tenant
	// has no model to run a data-defined protocol with.
	CheckRunnable(ctx context.Context) error
}

// protocolFor resolves CreateDebate's protocol: a built-in one, or the
// caller's registered document ("NAME@VERSION", or "NAME" for its latest
// version), which needs a model. An unknown plain name is
// INVALID_ARGUMENT; an unknown NAME@VERSION (another tenant's too) is
// NOT_FOUND.
func (ds *debateService) protocolFor(ctx context.Context, name string) (*orchestrator.Protocol, error) {
	if p, err := ds.Protocols.Get(name); err == nil {
		return p, nil
	}
	unknown := &debate.ValidationError{Violations: []debate.FieldViolation{{Field: "protocol",
		Description: fmt.Sprintf("unknown protocol %q (see ListProtocols)", name)}}}
	if ds.Custom == nil {
		return nil, unknown
	}
	docName, version := name, 0
	if strings.Contains(name, "@") {
		n, v, ok := debate.ParseProtocolRef(name)
		if !ok {
			return nil, unknown
		}
		docName, version = n, v
	}
	doc, err := ds.Custom.Get(ctx, docName, version)
	switch {
	case errors.Is(err, debate.ErrNotFound) && version == 0:
		// A plain name that is neither built in nor registered by this
		// tenant is a bad argument, as it always was.
		return nil, unknown
	case errors.Is(err, debate.ErrNotFound):
		// Another tenant's NAME@VERSION is as absent as one nobody has.
		return nil, fmt.Errorf("protocol %q is not registered by this tenant (see ListProtocols): %w", name, debate.ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	if err := ds.Custom.CheckRunnable(ctx); err != nil {
		return nil, err
	}
	return ds.Protocols.Resolve(ctx, doc.TenantID, doc.Ref())
}

// registeredProtocols lists the caller's registered protocols as
// ListProtocols shows them (none without ProtocolService).
func (ds *debateService) registeredProtocols(ctx context.Context) ([]*debatedv1.Protocol, error) {
	if ds.Custom == nil {
		return nil, nil
	}
	docs, err := ds.Custom.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*debatedv1.Protocol, 0, len(docs))
	for _, d := range docs {
		// Through the engine's registry: compiled once per tenant and
		// version, as the debates use them.
		p, err := ds.Protocols.Resolve(ctx, d.TenantID, d.Ref())
		if errors.Is(err, debate.ErrInvalid) {
			// A document this server version no longer accepts is left
			// out, not allowed to hide the others.
			ds.s.log.WarnContext(ctx, "a registered protocol does not compile", slog.String("protocol", d.Ref()),
				slog.String("error", err.Error()))
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, protocolToProto(p))
	}
	return out, nil
}

// protocolService implements ProtocolService.
type protocolService struct {
	debatedv1.UnimplementedProtocolServiceServer
	s      *Server
	custom CustomProtocols
}

func (ps *protocolService) RegisterProtocol(ctx context.Context, req *debatedv1.RegisterProtocolRequest) (*debatedv1.RegisterProtocolResponse, error) {
	doc, created, err := ps.custom.Register(ctx, []byte(req.GetDocument()))
	if err != nil {
		var ve *debate.ValidationError
		if errors.As(err, &ve) {
			vs := make([]debate.FieldViolation, 0, len(ve.Violations))
			for _, v := range ve.Violations {
				vs = append(vs, debate.FieldViolation{Field: strings.TrimSuffix("document."+v.Field, "."), Description: v.Description})
			}
			return nil, badRequest(vs)
		}
		return nil, toStatus(ctx, ps.s.log, err)
	}
	pd, err := ps.toProto(ctx, doc)
	if err != nil {
		return nil, toStatus(ctx, ps.s.log, err)
	}
	return &debatedv1.RegisterProtocolResponse{Protocol: pd, Created: created}, nil
}

func (ps *protocolService) GetProtocol(ctx context.Context, req *debatedv1.GetProtocolRequest) (*debatedv1.GetProtocolResponse, error) {
	doc, err := ps.custom.Get(ctx, req.GetName(), int(req.GetVersion()))
	if err != nil {
		return nil, toStatus(ctx, ps.s.log, err)
	}
	pd, err := ps.toProto(ctx, doc)
	if err != nil {
		return nil, toStatus(ctx, ps.s.log, err)
	}
	return &debatedv1.GetProtocolResponse{Protocol: pd}, nil
}

func (ps *protocolService) toProto(ctx context.Context, d debate.ProtocolDocument) (*debatedv1.ProtocolDocument, error) {
	p, err := ps.custom.Protocol(ctx, d.Ref())
	if err != nil {
		return nil, err
	}
	return &debatedv1.ProtocolDocument{Name: d.Name, Version: int32(d.Version), Ref: d.Ref(), Document: string(d.Document), //nolint:gosec // versions are small positive integers
		Sha256: d.SHA256, CreateTime: timestamppb.New(d.CreatedAt), Protocol: protocolToProto(p)}, nil
}

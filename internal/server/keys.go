package server

import (
	"context"
	"slices"
	"strings"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/debate"
	"github.com/debated/debated/internal/ledger"
	"github.com/debated/debated/internal/orchestrator"
	"github.com/debated/debated/internal/tlog"
)

// keyService implements KeyService: what the deployment publishes so that
// bundles can be checked against keys obtained from the server rather than
// the keys they carry.
type keyService struct {
	debatedv1.UnimplementedKeyServiceServer
	s         *Server
	keys      *ledger.Keyring
	protocols *orchestrator.Registry
	// custom, if set, adds the tenant's registered protocols.
	custom CustomProtocols
	// checkpoint returns the checkpoint keys (nil: none configured).
	checkpoint func() []debate.PublicKey
}

// signingActors returns every actor that signs the tenant's records: the
// actors of every protocol's role guard (which, being strict, names the
// actor of every event type) and of the deal audit log, sorted.
func signingActors(protocols []*orchestrator.Protocol) []string {
	var actors []string
	for _, p := range protocols {
		for _, as := range p.MergedRoleGuard() {
			actors = append(actors, as...)
		}
	}
	for _, as := range ledger.DealPolicy().RoleGuard {
		actors = append(actors, as...)
	}
	slices.Sort(actors)
	return slices.Compact(actors)
}

func (ks *keyService) GetSigningKeys(ctx context.Context, _ *debatedv1.GetSigningKeysRequest) (*debatedv1.GetSigningKeysResponse, error) {
	tenant, err := debate.TenantFrom(ctx)
	if err != nil {
		return nil, toStatus(ctx, ks.s.log, err)
	}
	protocols := ks.protocols.List()
	if ks.custom != nil {
		docs, err := ks.custom.List(ctx)
		if err != nil {
			return nil, toStatus(ctx, ks.s.log, err)
		}
		for _, d := range docs {
			p, err := ks.custom.Protocol(ctx, d.Ref())
			if err != nil {
				return nil, toStatus(ctx, ks.s.log, err)
			}
			protocols = append(protocols, p)
		}
	}
	keys := ks.keys.Published(tenant, signingActors(protocols))
	if ks.checkpoint != nil {
		keys = append(keys, ks.checkpoint()...)
	}
	out := &debatedv1.GetSigningKeysResponse{TenantId: tenant}
	for _, k := range keys {
		out.Keys = append(out.Keys, apiconv.PublicKeyToProto(k))
	}
	for _, p := range protocols {
		out.Policies = append(out.Policies, apiconv.PolicyToProto(p.Name, LedgerPolicy(p)))
	}
	out.Policies = append(out.Policies, apiconv.PolicyToProto(ledger.DealProtocol, ledger.DealPolicy()))
	slices.SortFunc(out.Policies, func(a, b *debatedv1.LedgerPolicy) int {
		return strings.Compare(a.GetProtocol(), b.GetProtocol())
	})
	return out, nil
}

// dealAuditService implements DealAuditService over the grading store.
type dealAuditService struct {
	debatedv1.UnimplementedDealAuditServiceServer
	s    *Server
	keys *ledger.Keyring
	tlog *Log // nil: no transparency log to check against
}

// dealLog reads a deal's whole audit log: its legacy events and its chained
// events in bundle form. Returns debate.ErrNotFound for another tenant's
// deal.
func (ds *dealAuditService) dealLog(ctx context.Context, dealID string) (tenant string, legacy, chained []ledger.DealEvent, err error) {
	if tenant, err = debate.TenantFrom(ctx); err != nil {
		return "", nil, nil, err
	}
	var all []debate.DealEvent
	for after := int64(0); ; {
		page, err := ds.s.grading.DealEventList(ctx, dealID, after, dealPage)
		if err != nil {
			return "", nil, nil, err
		}
		all = append(all, page...)
		if len(page) < dealPage {
			break
		}
		after = page[len(page)-1].Seq
	}
	old, rest := ledger.SplitLegacy(all)
	conv := func(es []debate.DealEvent) ([]ledger.DealEvent, error) {
		out := make([]ledger.DealEvent, 0, len(es))
		for _, e := range es {
			de, err := ledger.DealEventOf(tenant, e)
			if err != nil {
				return nil, err
			}
			out = append(out, de)
		}
		return out, nil
	}
	if legacy, err = conv(old); err != nil {
		return "", nil, nil, err
	}
	if chained, err = conv(rest); err != nil {
		return "", nil, nil, err
	}
	return tenant, legacy, chained, nil
}

// dealPage is the page size dealLog reads with (the store's cap).
const dealPage = 1000

func (ds *dealAuditService) VerifyDeal(ctx context.Context, req *debatedv1.VerifyDealRequest) (*debatedv1.VerifyDealResponse, error) {
	var before tlog.Head
	if ds.tlog != nil {
		// Integrated before the events are read: every leaf of this head
		// has its event among them.
		var err error
		if before, err = ds.tlog.Store.LogIntegrate(ctx); err != nil {
			return nil, toStatus(ctx, ds.s.log, err)
		}
	}
	tenant, legacy, chained, err := ds.dealLog(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	keys := ds.keys.PublicKeys(tenant, ledger.DealActors(chained))
	rep := ledger.VerifyDeal(tenant, req.GetDealId(), int64(len(legacy)), chained, keys, ledger.DealPolicy())
	if ds.tlog != nil {
		problems, err := ds.tlog.checkDeal(ctx, req.GetDealId(), chained, before)
		if err != nil {
			return nil, toStatus(ctx, ds.s.log, err)
		}
		for _, p := range problems {
			if rep.OK || p.Seq < rep.FirstBadSeq {
				rep.FirstBadSeq = p.Seq
			}
			rep.OK = false
			rep.Problems = append(rep.Problems, p)
		}
	}
	out := &debatedv1.VerifyDealResponse{Ok: rep.OK, FirstBadSeq: rep.FirstBadSeq,
		EventCount: int64(len(legacy) + len(chained)), LegacyEventCount: int64(len(legacy))}
	if len(chained) > 0 {
		out.HeadHash = chained[len(chained)-1].Hash
	}
	for _, p := range rep.Problems {
		out.Problems = append(out.Problems, &debatedv1.VerifyProblem{Seq: p.Seq, Rule: p.Rule, Detail: p.Detail})
	}
	return out, nil
}

func (ds *dealAuditService) ExportDeal(ctx context.Context, req *debatedv1.ExportDealRequest) (*debatedv1.ExportDealResponse, error) {
	tenant, legacy, chained, err := ds.dealLog(ctx, req.GetDealId())
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	data, err := ledger.MarshalDealBundle(&ledger.DealBundle{
		DealID:       req.GetDealId(),
		TenantID:     tenant,
		LegacyEvents: legacy,
		Events:       chained,
		PublicKeys:   ds.keys.PublicKeys(tenant, ledger.DealActors(chained)),
		Policy:       ledger.DealPolicy(),
	})
	if err != nil {
		return nil, toStatus(ctx, ds.s.log, err)
	}
	return &debatedv1.ExportDealResponse{BundleJson: string(data)}, nil
}

package main

import (
	"context"
	"fmt"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
)

// evidenceList prints a deal's evidence items: their ids are what
// `defect flag --ref` takes.
func (c *cli) evidenceList(ctx context.Context, args []string) error {
	id, err := oneArg(c.subflags("evidence list"), args, "DEAL_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	client := debatedv1.NewRegistryServiceClient(c.conn)
	items, err := allPages(func(token string) ([]*debatedv1.EvidenceItem, string, error) {
		resp, err := client.ListEvidence(ctx, &debatedv1.ListEvidenceRequest{DealId: id, PageSize: 1000, PageToken: token})
		return resp.GetEvidenceItems(), resp.GetNextPageToken(), err
	})
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return c.printNone(&debatedv1.ListEvidenceResponse{}, fmt.Sprintf("deal %s has no evidence items", id))
	}
	if c.json {
		return c.printJSON(&debatedv1.ListEvidenceResponse{EvidenceItems: items})
	}
	return c.evidenceTable(items)
}

func (c *cli) evidenceGet(ctx context.Context, args []string) error {
	fs := c.subflags("evidence get")
	deal := fs.String("deal", "", "the deal, when several deals use the evidence id")
	id, err := oneArg(fs, args, "EVIDENCE_ID")
	if err != nil {
		return err
	}
	ctx, cancel, err := c.tenantCtx(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	resp, err := debatedv1.NewRegistryServiceClient(c.conn).GetEvidence(ctx, &debatedv1.GetEvidenceRequest{EvidenceId: id, DealId: *deal})
	if err != nil {
		return err
	}
	if c.json {
		return c.printJSON(resp)
	}
	return c.evidenceTable([]*debatedv1.EvidenceItem{resp.GetEvidenceItem()})
}

func (c *cli) evidenceTable(items []*debatedv1.EvidenceItem) error {
	rows := make([][]string, 0, len(items))
	for _, e := range items {
		retrieved := "-"
		if e.GetRetrievalTime() != nil {
			retrieved = e.GetRetrievalTime().AsTime().Format("2006-01-02T15:04:05Z")
		}
		rows = append(rows, []string{e.GetEvidenceId(), trim(e.GetSourceGrade(), "SOURCE_GRADE_"), orDash(e.GetSourceSystem()),
			orDash(e.GetSourceSpanId()), orDash(e.GetUpstreamOriginId()), retrieved})
	}
	return c.table("EVIDENCE_ID\tGRADE\tSOURCE\tSPAN\tORIGIN\tRETRIEVED", rows)
}

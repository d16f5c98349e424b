package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// httpClient talks to the running stack as curl would: plain HTTP/1.1
// requests with a bearer key and JSON bodies.
type httpClient struct {
	t    *testing.T
	base string
	key  string
}

func (s *stack) http(t *testing.T, ctx context.Context) *httpClient {
	md, _ := metadata.FromOutgoingContext(ctx)
	return &httpClient{t: t, base: "http://" + s.conn.Target(), key: strings.TrimPrefix(md.Get("authorization")[0], "Bearer ")}
}

// do sends one request and returns the status and the decoded JSON body.
func (c *httpClient) do(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(c.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.base+path, rd)
	require.NoError(c.t, err)
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	out := map[string]any{}
	if len(raw) > 0 {
		require.NoError(c.t, json.Unmarshal(raw, &out), "%s %s: %s", method, path, raw)
	}
	return resp.StatusCode, out
}

// waitDone follows a debate over native gRPC until it ends.
func (s *stack) waitDone(t *testing.T, ctx context.Context, id string) {
	t.Helper()
	s.watch(t, ctx, id, 0, nil)
}

// TestRESTRoutes covers every REST route of the annotations with curl-style
// requests: what each returns, that a GET never writes, auth and bad input
// errors, and another tenant's ids answering 404.
func TestRESTRoutes(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	a, b := s.http(t, s.a), s.http(t, s.b)

	code, body := a.do("GET", "/v1/deals", nil)
	require.Equal(t, 200, code)
	deals := body["deals"].([]any)
	require.Len(t, deals, 1)
	require.Equal(t, "deal-a", deals[0].(map[string]any)["deal"].(map[string]any)["dealId"])

	code, body = a.do("GET", "/v1/deals/deal-a", nil)
	require.Equal(t, 200, code)
	require.Equal(t, "deal-a", body["deal"].(map[string]any)["deal"].(map[string]any)["dealId"])

	// The stored grading: none yet (FAILED_PRECONDITION: grade it first);
	// a GET does not grade.
	code, body = a.do("GET", "/v1/deals/deal-a/grading", nil)
	require.Equal(t, 400, code, "%v", body)
	require.Contains(t, body["message"], "never graded")
	code, _ = a.do("GET", "/v1/deals/deal-a/events", nil)
	require.Equal(t, 200, code)
	code, graded := a.do("POST", "/v1/deals/deal-a/grading", map[string]any{})
	require.Equal(t, 200, code)
	_, events := a.do("GET", "/v1/deals/deal-a/events", nil)
	code, stored := a.do("GET", "/v1/deals/deal-a/grading", nil)
	require.Equal(t, 200, code)
	require.NotEmpty(t, stored["claims"])
	require.Equal(t, graded["claims"], stored["claims"])
	_, eventsAfter := a.do("GET", "/v1/deals/deal-a/events", nil)
	require.Equal(t, events, eventsAfter, "a GET of the grading must not write")

	code, body = a.do("GET", "/v1/deals/deal-a/claims", nil)
	require.Equal(t, 200, code)
	claims := body["claims"].([]any)
	require.NotEmpty(t, claims)
	claimID := claims[0].(map[string]any)["claimId"].(string)
	code, _ = a.do("GET", "/v1/claims/"+claimID, nil)
	require.Equal(t, 200, code)
	code, _ = a.do("GET", "/v1/deals/deal-a/defects", nil)
	require.Equal(t, 200, code)
	code, body = a.do("GET", "/v1/deals/deal-a/sanads?claim_id="+claimID, nil)
	require.Equal(t, 200, code)
	sanads := body["sanads"].([]any)
	require.NotEmpty(t, sanads)
	for _, sn := range sanads {
		require.Equal(t, claimID, sn.(map[string]any)["claimId"], "only the claim's sanads")
	}
	primary := sanads[0].(map[string]any)["primaryEvidenceId"]
	var citedFound bool
	for _, ev := range body["evidenceItems"].([]any) {
		citedFound = citedFound || ev.(map[string]any)["evidenceId"] == primary
	}
	require.True(t, citedFound, "the cited evidence comes with the sanads")
	code, body = a.do("GET", "/v1/deals/deal-a/sanads", nil)
	require.Equal(t, 200, code)
	require.Greater(t, len(body["sanads"].([]any)), len(sanads))

	code, body = a.do("GET", "/v1/protocols", nil)
	require.Equal(t, 200, code)
	require.NotEmpty(t, body["protocols"])

	code, body = a.do("POST", "/v1/debates", map[string]any{"dealId": "deal-a", "protocol": "idis.vc.v1", "options": map[string]any{"max_rounds": 1}})
	require.Equal(t, 200, code, "%v", body)
	require.Equal(t, true, body["created"])
	id := body["debate"].(map[string]any)["debateId"].(string)
	s.waitDone(t, s.a, id)

	code, body = a.do("GET", "/v1/debates", nil)
	require.Equal(t, 200, code)
	require.Len(t, body["debates"], 1)
	code, body = a.do("GET", "/v1/debates/"+id, nil)
	require.Equal(t, 200, code)
	require.Equal(t, "DEBATE_STATUS_COMPLETED", body["debate"].(map[string]any)["status"])
	code, body = a.do("GET", "/v1/debates/"+id+"/deliverables", nil)
	require.Equal(t, 200, code, "%v", body)
	require.Equal(t, true, body["verification"].(map[string]any)["ok"])
	code, body = a.do("GET", "/v1/debates/"+id+"/verification", nil)
	require.Equal(t, 200, code)
	require.Equal(t, true, body["ok"])
	// ExportDebate streams its bundle in chunks: it has no REST route (Connect
	// and gRPC-Web clients stream it, as the dashboard does).

	// Errors: no key, a bad key, bad input with field details.
	anon := &httpClient{t: t, base: a.base}
	code, _ = anon.do("GET", "/v1/deals", nil)
	require.Equal(t, 401, code)
	bad := &httpClient{t: t, base: a.base, key: "dbk_nope"}
	code, _ = bad.do("GET", "/v1/deals", nil)
	require.Equal(t, 401, code)
	code, body = a.do("GET", "/v1/deals?page_size=-1", nil)
	require.Equal(t, 400, code)
	require.Contains(t, body["message"], "page_size")
	// A query parameter the call does not have, or whose value does not
	// parse, is a bad request naming it, like any other.
	for query, want := range map[string]string{
		"pagesize=5":                   "is not a parameter of this call (its parameters: status, deal_id, page_size, page_token)",
		"page_size=1.5":                `must be a whole number, not "1.5"`,
		"page_size=ten":                "cannot be read: ",
		"status=bogus":                 "cannot be read: ",
		"status=DEBATE_STATUS_RUNNING": "",
	} {
		code, body = a.do("GET", "/v1/debates?"+query, nil)
		if want == "" {
			require.Equal(t, 200, code, "%s: %v", query, body)
			continue
		}
		require.Equal(t, 400, code, "%s: %v", query, body)
		require.EqualValues(t, 3, body["code"], query)
		field, _, _ := strings.Cut(query, "=")
		violations := body["details"].([]any)[0].(map[string]any)["fieldViolations"].([]any)
		require.Equal(t, field, violations[0].(map[string]any)["field"], query)
		require.Contains(t, violations[0].(map[string]any)["description"], want, query)
	}
	code, body = a.do("POST", "/v1/debates", map[string]any{"dealId": "", "protocol": "synthetic.v1"})
	require.Equal(t, 400, code)
	require.Contains(t, body["message"], "deal_id")
	code, body = a.do("POST", "/v1/debates", map[string]any{"dealId": 5, "protocol": "synthetic.v1"})
	require.Equal(t, 400, code)
	require.Contains(t, body["message"], "request body: ")
	require.NotContains(t, body["message"], "proto:", "the decoder's prefix is not shown")

	// Tenant B sees none of A's things, through every route.
	for _, p := range []string{
		"/v1/deals/deal-a", "/v1/deals/deal-a/grading", "/v1/deals/deal-a/claims", "/v1/deals/deal-a/defects", "/v1/deals/deal-a/sanads",
		"/v1/deals/deal-a/events", "/v1/claims/" + claimID, "/v1/debates/" + id, "/v1/debates/" + id + "/deliverables",
		"/v1/debates/" + id + "/verification",
	} {
		code, body := b.do("GET", p, nil)
		require.Equal(t, 404, code, "GET %s as tenant B: %v", p, body)
	}
	for _, p := range []string{"/v1/deals/deal-a/grading", "/v1/debates/" + id + ":cancel"} {
		code, body := b.do("POST", p, map[string]any{"reason": "not mine"})
		require.Equal(t, 404, code, "POST %s as tenant B: %v", p, body)
	}
	code, body = b.do("POST", "/v1/debates", map[string]any{"dealId": "deal-a", "protocol": "synthetic.v1"})
	require.Equal(t, 404, code, "%v", body)
	code, body = b.do("GET", "/v1/debates", nil)
	require.Equal(t, 200, code)
	require.Empty(t, body["debates"])
	code, body = b.do("GET", "/v1/deals", nil)
	require.Equal(t, 200, code)
	require.Len(t, body["deals"], 1, "B sees only its own deal")
}

// TestBrowserProtocols calls the same method over every protocol the port
// speaks: another tenant's id answers NotFound on each, the caller's own
// answers, and a missing key is refused, so no protocol bypasses the
// interceptors.
func TestBrowserProtocols(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	a := s.http(t, s.a)
	url := a.base + "/debated.v1.RegistryService/GetDeal"
	clients := map[string]*connect.Client[debatedv1.GetDealRequest, debatedv1.GetDealResponse]{
		"connect+json":    connect.NewClient[debatedv1.GetDealRequest, debatedv1.GetDealResponse](http.DefaultClient, url, connect.WithProtoJSON()),
		"connect+proto":   connect.NewClient[debatedv1.GetDealRequest, debatedv1.GetDealResponse](http.DefaultClient, url),
		"grpc-web+proto":  connect.NewClient[debatedv1.GetDealRequest, debatedv1.GetDealResponse](http.DefaultClient, url, connect.WithGRPCWeb()),
		"grpc-web+json":   connect.NewClient[debatedv1.GetDealRequest, debatedv1.GetDealResponse](http.DefaultClient, url, connect.WithGRPCWeb(), connect.WithProtoJSON()),
		"connect GET":     connect.NewClient[debatedv1.GetDealRequest, debatedv1.GetDealResponse](http.DefaultClient, url, connect.WithHTTPGet(), connect.WithProtoJSON()),
		"connect+gzip":    connect.NewClient[debatedv1.GetDealRequest, debatedv1.GetDealResponse](http.DefaultClient, url, connect.WithSendGzip()),
		"grpc-web+binary": connect.NewClient[debatedv1.GetDealRequest, debatedv1.GetDealResponse](http.DefaultClient, url, connect.WithGRPCWeb(), connect.WithSendGzip()),
	}
	call := func(c *connect.Client[debatedv1.GetDealRequest, debatedv1.GetDealResponse], key, deal string) (*debatedv1.GetDealResponse, error) {
		req := connect.NewRequest(&debatedv1.GetDealRequest{DealId: deal})
		if key != "" {
			req.Header().Set("Authorization", "Bearer "+key)
		}
		resp, err := c.CallUnary(context.Background(), req)
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	}
	for name, c := range clients {
		t.Run(name, func(t *testing.T) {
			got, err := call(c, a.key, "deal-a")
			require.NoError(t, err)
			require.Equal(t, "deal-a", got.GetDeal().GetDeal().GetDealId())
			_, err = call(c, a.key, "deal-b")
			require.Equal(t, connect.CodeNotFound, connect.CodeOf(err), "%v", err)
			_, err = call(c, "", "deal-a")
			require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err), "%v", err)
			_, err = call(c, a.key, strings.Repeat("x", 200))
			require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "validation applies: %v", err)
		})
	}
	t.Run("grpc", func(t *testing.T) {
		reg := debatedv1.NewRegistryServiceClient(s.conn)
		_, err := reg.GetDeal(s.a, &debatedv1.GetDealRequest{DealId: "deal-b"})
		require.Equal(t, codes.NotFound, status.Code(err))
		_, err = reg.GetDeal(s.a, &debatedv1.GetDealRequest{DealId: "deal-a"})
		require.NoError(t, err)
	})
	t.Run("rest", func(t *testing.T) {
		code, _ := a.do("GET", "/v1/deals/deal-b", nil)
		require.Equal(t, 404, code)
	})
}

// TestWatchOverConnect streams a debate to a browser-style Connect JSON
// client: every event arrives in order with its payload as a JSON object
// beside the canonical string, and another tenant's debate is NotFound.
func TestWatchOverConnect(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	a := s.http(t, s.a)
	d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 2})
	watch := func(key, id string) (int, []map[string]any) {
		body, _ := json.Marshal(map[string]any{"debateId": id})
		var frame bytes.Buffer
		frame.WriteByte(0)
		frame.Write([]byte{byte(len(body) >> 24), byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))})
		frame.Write(body)
		req, err := http.NewRequestWithContext(context.Background(), "POST", a.base+"/debated.v1.DebateService/WatchDebate", &frame)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/connect+json")
		req.Header.Set("Connect-Protocol-Version", "1")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer func() { _ = resp.Body.Close() }()
		r := bufio.NewReader(resp.Body)
		var msgs []map[string]any
		for {
			var hdr [5]byte
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				require.ErrorIs(t, err, io.EOF)
				return resp.StatusCode, msgs
			}
			n := int(hdr[1])<<24 | int(hdr[2])<<16 | int(hdr[3])<<8 | int(hdr[4])
			buf := make([]byte, n)
			_, err := io.ReadFull(r, buf)
			require.NoError(t, err)
			m := map[string]any{}
			require.NoError(t, json.Unmarshal(buf, &m))
			if hdr[0]&2 != 0 { // end of stream
				m["end"] = true
			}
			msgs = append(msgs, m)
		}
	}
	_, msgs := watch(a.key, d.GetDebateId())
	// At least one message of events (a watcher that joins behind gets
	// them in batches) and the end of the stream.
	require.GreaterOrEqual(t, len(msgs), 2)
	end := msgs[len(msgs)-1]
	require.Equal(t, true, end["end"])
	require.Nil(t, end["error"], "%v", end)
	var seq float64
	var evs []map[string]any // one event a message, or a batch of them
	for _, m := range msgs[:len(msgs)-1] {
		if ev, ok := m["event"].(map[string]any); ok {
			evs = append(evs, ev)
		}
		batch, _ := m["events"].([]any)
		for _, e := range batch {
			evs = append(evs, e.(map[string]any))
		}
	}
	for _, ev := range evs {
		n, err := json.Number(ev["seq"].(string)).Float64()
		require.NoError(t, err)
		require.Equal(t, seq+1, n, "events in order")
		seq = n
		payload, ok := ev["payload"].(map[string]any)
		require.True(t, ok, "payload must be a JSON object: %v", ev["payload"])
		var want map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev["payloadJson"].(string)), &want))
		require.Equal(t, want, payload)
	}
	require.Positive(t, seq)
	require.Greater(t, len(evs), 3, "the debate's events, in as many messages as the server batched them in")

	b := s.http(t, s.b)
	_, msgs = watch(b.key, d.GetDebateId())
	require.Len(t, msgs, 1)
	require.Equal(t, "not_found", msgs[0]["error"].(map[string]any)["code"])

	// The native gRPC path never carries the payload value.
	got := s.watch(t, s.a, d.GetDebateId(), 0, nil)
	for _, m := range got {
		if m.GetEvent() != nil {
			require.Nil(t, m.GetEvent().GetPayload())
		}
	}
}

// TestCORSAndDashboard checks CORS from DEBATED_CORS_ORIGINS (and none
// without it) and that / serves the dashboard.
func TestCORSAndDashboard(t *testing.T) {
	t.Parallel()
	preflight := func(base, origin string) http.Header {
		req, err := http.NewRequestWithContext(context.Background(), "OPTIONS", base+"/debated.v1.RegistryService/ListDeals", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,connect-protocol-version,content-type")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.Header
	}
	open := startStack(t, "sqlite", map[string]string{"DEBATED_CORS_ORIGINS": "https://dash.example"})
	base := open.http(t, open.a).base
	h := preflight(base, "https://dash.example")
	require.Equal(t, "https://dash.example", h.Get("Access-Control-Allow-Origin"))
	require.Contains(t, strings.ToLower(h.Get("Access-Control-Allow-Headers")), "authorization")
	require.Empty(t, preflight(base, "https://evil.example").Get("Access-Control-Allow-Origin"))

	closed := startStack(t, "sqlite", nil)
	cbase := closed.http(t, closed.a).base
	require.Empty(t, preflight(cbase, "https://dash.example").Get("Access-Control-Allow-Origin"))

	resp, err := http.Get(cbase + "/")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/html")
	require.Contains(t, string(page), "<title>debated")
	resp, err = http.Get(cbase + "/v1/nothing")
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, 404, resp.StatusCode)
	require.False(t, errors.Is(err, io.EOF))
}

// TestRESTWriteRoutes covers the REST routes that write: the admin routes
// (with the admin token), importing a deal, the defect lifecycle, output
// validation, resolving a human gate and cancelling a debate, each with
// another tenant answering 404 where it names A's things.
func TestRESTWriteRoutes(t *testing.T) {
	t.Parallel()
	s := startStack(t, "sqlite", nil)
	a, b := s.http(t, s.a), s.http(t, s.b)
	admin := &httpClient{t: t, base: a.base, key: "e2e-admin"}

	code, body := admin.do("POST", "/v1/admin/tenants", map[string]any{"name": "rest"})
	require.Equal(t, 200, code, "%v", body)
	tenant := body["tenant"].(map[string]any)["tenantId"].(string)
	code, body = admin.do("GET", "/v1/admin/tenants", nil)
	require.Equal(t, 200, code)
	require.Len(t, body["tenants"], 3)
	code, body = admin.do("POST", "/v1/admin/tenants/"+tenant+"/keys", map[string]any{"name": "rest"})
	require.Equal(t, 200, code, "%v", body)
	rest := &httpClient{t: t, base: a.base, key: body["secret"].(string)}
	keyID := body["apiKey"].(map[string]any)["keyId"].(string)
	code, _ = admin.do("GET", "/v1/admin/tenants/"+tenant+"/model", nil)
	require.Contains(t, []int{200, 404}, code)
	code, _ = a.do("GET", "/v1/admin/tenants", nil)
	require.Equal(t, 401, code, "a tenant key is not the admin token")

	// Import a deal as JSON, the body being ImportDealRequest.
	req, err := apiconv.BundleToProto(storetest.SampleBundle("deal-rest"))
	require.NoError(t, err)
	raw, err := protojson.Marshal(req)
	require.NoError(t, err)
	var imp map[string]any
	require.NoError(t, json.Unmarshal(raw, &imp))
	code, body = rest.do("POST", "/v1/deals", imp)
	require.Equal(t, 200, code, "%v", body)
	code, _ = rest.do("GET", "/v1/deals/deal-rest", nil)
	require.Equal(t, 200, code)
	code, _ = a.do("GET", "/v1/deals/deal-rest", nil)
	require.Equal(t, 404, code)

	// The defect lifecycle on A's deal.
	bundle := storetest.SampleBundle("deal-a")
	flag := map[string]any{
		"claimId": bundle.Claims[0].ID, "defectType": "DEFECT_TYPE_IMPLAUSIBILITY",
		"description":  "the figure is far above what the documents support, checked against the bank statements",
		"evidenceRefs": []string{bundle.Evidence[0].ID}, "actor": "analyst@fund",
	}
	code, body = b.do("POST", "/v1/deals/deal-a/defects", flag)
	require.Equal(t, 404, code, "%v", body)
	code, body = a.do("POST", "/v1/deals/deal-a/defects", flag)
	require.Equal(t, 200, code, "%v", body)
	defect := body["defect"].(map[string]any)["defectId"].(string)
	closeBody := map[string]any{"actor": "analyst@fund", "reason": "reconciled with the source"}
	code, _ = b.do("POST", "/v1/deals/deal-a/defects/"+defect+":cure", closeBody)
	require.Equal(t, 404, code)
	code, body = a.do("POST", "/v1/deals/deal-a/defects/"+defect+":waive", closeBody)
	require.Equal(t, 403, code, "waiving needs an admin-scoped key: %v", body)
	code, body = a.do("POST", "/v1/deals/deal-a/defects/"+defect+":cure", closeBody)
	require.Equal(t, 200, code, "%v", body)

	// Output validation: a bad output is a verdict, not an error.
	code, body = a.do("POST", "/v1/deals/deal-a/outputs:validate", map[string]any{"outputJson": `{"agent_id":"advocate"}`})
	require.Equal(t, 200, code, "%v", body)
	require.Equal(t, false, body["valid"])
	require.NotEmpty(t, body["violations"])

	// A human gate resolved, and a debate cancelled, over REST.
	code, body = a.do("POST", "/v1/debates", map[string]any{"dealId": "deal-a", "protocol": "synthetic.v1", "options": map[string]any{"max_rounds": 2, "gate_round": 1}})
	require.Equal(t, 200, code, "%v", body)
	gated := body["debate"].(map[string]any)["debateId"].(string)
	s.watch(t, s.a, gated, 0, isGate)
	// The gate's event is committed with the gate: it is there to read.
	code, body = a.do("GET", "/v1/debates/"+gated, nil)
	require.Equal(t, 200, code)
	require.Len(t, body["gates"], 1)
	gate := body["gates"].([]any)[0].(map[string]any)["gateId"].(string)
	resolve := map[string]any{"approve": true, "reason": "numbers checked"}
	code, _ = b.do("POST", "/v1/debates/"+gated+"/gates/"+gate+":resolve", resolve)
	require.Equal(t, 404, code)
	code, body = a.do("POST", "/v1/debates/"+gated+"/gates/"+gate+":resolve", resolve)
	require.Equal(t, 200, code, "%v", body)
	s.waitDone(t, s.a, gated)

	code, body = a.do("POST", "/v1/debates", map[string]any{"dealId": "deal-a", "protocol": "synthetic.v1", "options": map[string]any{"max_rounds": 3, "gate_round": 1}})
	require.Equal(t, 200, code, "%v", body)
	doomed := body["debate"].(map[string]any)["debateId"].(string)
	code, body = a.do("POST", "/v1/debates/"+doomed+":cancel", map[string]any{"reason": "deal withdrawn"})
	require.Equal(t, 200, code, "%v", body)
	require.Equal(t, "DEBATE_STATUS_ABORTED", body["debate"].(map[string]any)["status"])

	code, _ = admin.do("POST", "/v1/admin/keys/"+keyID+":revoke", map[string]any{})
	require.Equal(t, 200, code)
	code, _ = rest.do("GET", "/v1/deals", nil)
	require.Equal(t, 401, code, "a revoked key")
}

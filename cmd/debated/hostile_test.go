package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	debatedv1 "github.com/debated/debated/gen/debated/v1"
	"github.com/debated/debated/internal/apiconv"
	"github.com/debated/debated/internal/store/storetest"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"
)

// apiMethod is one RPC of the debated.v1 API, found in the registry of
// compiled protos: a test over apiMethods covers RPCs added later too.
type apiMethod struct {
	service, name string
	desc          protoreflect.MethodDescriptor
}

func (m apiMethod) fullName() string { return "/" + m.service + "/" + m.name }

func apiMethods(t *testing.T) []apiMethod {
	t.Helper()
	_ = debatedv1.File_debated_v1_debate_proto // make sure the package's descriptors are registered
	var out []apiMethod
	protoregistry.GlobalFiles.RangeFilesByPackage("debated.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				out = append(out, apiMethod{service: string(sd.FullName()), name: string(md.Name()), desc: md})
			}
		}
		return true
	})
	require.GreaterOrEqual(t, len(out), 28, "the API's methods were not found in the proto registry")
	return out
}

func newRequest(t *testing.T, m apiMethod) proto.Message {
	t.Helper()
	mt, err := protoregistry.GlobalTypes.FindMessageByName(m.desc.Input().FullName())
	require.NoError(t, err)
	return mt.New().Interface()
}

// call sends req to m with the credential m's service takes and returns
// the call's error (for a stream, the first error it reads, nil at EOF).
func (s *stack) call(ctx context.Context, m apiMethod, req any, opts ...grpc.CallOption) error {
	if m.service == "debated.v1.AdminService" {
		ctx = metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer e2e-admin")
	}
	mt, _ := protoregistry.GlobalTypes.FindMessageByName(m.desc.Output().FullName())
	if !m.desc.IsStreamingServer() && !m.desc.IsStreamingClient() {
		return s.conn.Invoke(ctx, m.fullName(), req, mt.New().Interface(), opts...)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := s.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: m.desc.IsStreamingClient()}, m.fullName(), opts...)
	if err != nil {
		return err
	}
	if err := st.SendMsg(req); err != nil {
		return err
	}
	if err := st.CloseSend(); err != nil {
		return err
	}
	for {
		if err := st.RecvMsg(mt.New().Interface()); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// stringSetter sets one string of a request (a field, an element of a list,
// a map value, at any depth up to a bound) and names it the way field
// violations do.
type stringSetter struct {
	path string
	set  func(m protoreflect.Message, v string)
}

// stringSetters lists every string a request of md can carry, down to
// depth nested messages.
func stringSetters(md protoreflect.MessageDescriptor, depth int) []stringSetter {
	if depth == 0 {
		return nil
	}
	var out []stringSetter
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		name := string(fd.Name())
		switch {
		case fd.IsMap():
			elem := name + "[" + strconv.Quote("k") + "]"
			key := protoreflect.ValueOfString("k").MapKey()
			if fd.MapKey().Kind() != protoreflect.StringKind {
				continue
			}
			switch fd.MapValue().Kind() {
			case protoreflect.StringKind:
				out = append(out, stringSetter{elem, func(m protoreflect.Message, v string) {
					m.Mutable(fd).Map().Set(key, protoreflect.ValueOfString(v))
				}})
			case protoreflect.MessageKind:
				for _, sub := range stringSetters(fd.MapValue().Message(), depth-1) {
					out = append(out, stringSetter{elem + "." + sub.path, func(m protoreflect.Message, v string) {
						mm := m.Mutable(fd).Map()
						val := mm.NewValue()
						sub.set(val.Message(), v)
						mm.Set(key, val)
					}})
				}
			}
		case fd.IsList() && fd.Kind() == protoreflect.StringKind:
			out = append(out, stringSetter{name + "[0]", func(m protoreflect.Message, v string) {
				m.Mutable(fd).List().Append(protoreflect.ValueOfString(v))
			}})
		case fd.IsList() && fd.Kind() == protoreflect.MessageKind:
			for _, sub := range stringSetters(fd.Message(), depth-1) {
				out = append(out, stringSetter{name + "[0]." + sub.path, func(m protoreflect.Message, v string) {
					l := m.Mutable(fd).List()
					e := l.NewElement()
					sub.set(e.Message(), v)
					l.Append(e)
				}})
			}
		case fd.Kind() == protoreflect.StringKind:
			out = append(out, stringSetter{name, func(m protoreflect.Message, v string) {
				m.Set(fd, protoreflect.ValueOfString(v))
			}})
		case fd.Kind() == protoreflect.MessageKind:
			for _, sub := range stringSetters(fd.Message(), depth-1) {
				out = append(out, stringSetter{name + "." + sub.path, func(m protoreflect.Message, v string) {
					sub.set(m.Mutable(fd).Message(), v)
				}})
			}
		}
	}
	return out
}

// rawCodec sends a request's bytes as they are ([]byte), so that a test can
// send what a proto library would refuse to encode (invalid UTF-8), and
// decodes answers as protobuf.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("rawCodec: %T", v)
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return proto.Unmarshal(data.Materialize(), v.(proto.Message))
}

func (rawCodec) Name() string { return "proto" }

// TestBadTextInAnyStringIsInvalidArgument: a NUL byte, or bytes that are
// not UTF-8, in any string of any request of any RPC (ids, names, nested
// registry rows, option values) answers InvalidArgument with a field
// violation naming that string, on both stores. PostgreSQL refuses NUL in
// text (SQLSTATE 22021), which once answered Internal; grpc-go answered
// invalid UTF-8 Internal before any interceptor ran.
func TestBadTextInAnyStringIsInvalidArgument(t *testing.T) {
	t.Parallel()
	const placeholder = "zzzzPLACEHOLDER"
	bad := map[string]string{
		"NUL":           "must not contain a NUL byte",
		"invalid UTF-8": "must be valid UTF-8",
	}
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := startStack(t, kind, nil)
			checked := 0
			for _, m := range apiMethods(t) {
				for _, set := range stringSetters(m.desc.Input(), 4) {
					for what, want := range bad {
						req := newRequest(t, m)
						set.set(req.ProtoReflect(), placeholder)
						wire, err := proto.Marshal(req)
						require.NoError(t, err)
						repl := "zzzz\x00LACEHOLDER"
						if what == "invalid UTF-8" {
							repl = "zzzz\xffLACEHOLDER"
						}
						require.Len(t, repl, len(placeholder))
						wire = bytes.ReplaceAll(wire, []byte(placeholder), []byte(repl))
						err = s.call(s.a, m, wire, grpc.ForceCodecV2(rawCodec{}))
						require.Equal(t, codes.InvalidArgument, status.Code(err), "%s %s %s: %v", m.name, set.path, what, err)
						var found bool
						for _, d := range status.Convert(err).Details() {
							if br, ok := d.(*errdetails.BadRequest); ok {
								for _, v := range br.GetFieldViolations() {
									found = found || (v.GetField() == set.path && strings.HasSuffix(v.GetDescription(), want))
								}
							}
						}
						require.True(t, found, "%s %s %s: %v", m.name, set.path, what, err)
						checked++
					}
				}
			}
			require.Greater(t, checked, 200)
		})
	}
}

// internalMarkers are texts that must never reach a client.
var internalMarkers = []string{"sqlite", "postgres", "pgx", "sqlstate", "constraint", "rpc error:",
	"duplicate key", "violates", "_pkey", "_fkey", "(foreign key)", "goroutine", "panic",
	"orchestrator:", "runner:", "server:", "json: unknown field", "json: cannot unmarshal", "characters characters", "at least 1 characters", "value must"}

func requireClean(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	msg := strings.ToLower(status.Convert(err).Message())
	for _, d := range status.Convert(err).Details() {
		msg += " " + strings.ToLower(fmt.Sprint(d))
	}
	for _, m := range internalMarkers {
		require.NotContains(t, msg, m, "%s answered %v", what, err)
	}
	switch status.Convert(err).Message() {
	case "not found", "failed precondition", "conflict", "already exists":
		t.Fatalf("%s answered %v: the answer does not say what is missing or wrong", what, err)
	}
}

// TestErrorsNameNoInternals sends empty, unknown and conflicting requests to
// every RPC on both stores and checks that no answer names the storage
// layer, a constraint, a SQLSTATE or a wrapped status.
func TestErrorsNameNoInternals(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			s := startStack(t, kind, nil)
			for _, m := range apiMethods(t) {
				// Missing: the empty request.
				requireClean(t, m.name+" (empty)", s.call(s.a, m, newRequest(t, m)))
				// Unknown: every top-level string set to an id nobody has.
				req := newRequest(t, m)
				fields := req.ProtoReflect().Descriptor().Fields()
				for i := range fields.Len() {
					if fd := fields.Get(i); fd.Kind() == protoreflect.StringKind && !fd.IsList() && !fd.IsMap() {
						req.ProtoReflect().Set(fd, protoreflect.ValueOfString("zz-nobody-has-this-1"))
					}
				}
				requireClean(t, m.name+" (unknown ids)", s.call(s.a, m, req))
				// Another tenant's ids.
				req = newRequest(t, m)
				for i := range fields.Len() {
					if fd := fields.Get(i); fd.Kind() == protoreflect.StringKind && strings.HasSuffix(string(fd.Name()), "deal_id") {
						req.ProtoReflect().Set(fd, protoreflect.ValueOfString("deal-a"))
					}
				}
				requireClean(t, m.name+" (other tenant)", s.call(s.b, m, req))
			}

			// Conflicts.
			reg := debatedv1.NewRegistryServiceClient(s.conn)
			imp := importRequestFor(t, "deal-a")
			imp.Deal.CompanyName += " changed"
			_, err := reg.ImportDeal(s.a, imp)
			require.Equal(t, codes.AlreadyExists, status.Code(err))
			requireClean(t, "ImportDeal with other content", err)

			imp = importRequestFor(t, "deal-c")
			imp.Claims[0].ClaimId = importRequestFor(t, "deal-a").Claims[0].ClaimId
			_, err = reg.ImportDeal(s.a, imp)
			require.Error(t, err)
			requireClean(t, "ImportDeal with a taken claim id", err)

			opts, err := structpb.NewStruct(map[string]any{"max_rounds": 1})
			require.NoError(t, err)
			_, err = s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "zz-no-deal", Protocol: "synthetic.v1", Options: opts})
			require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
			requireClean(t, "CreateDebate on an unknown deal", err)

			// An option of the wrong type, for every built-in protocol.
			for _, p := range []string{"synthetic.v1", "idis.vc.v1", "legal.adat.v1", "stratmaster.v1", "agent.protocol.v1"} {
				bad, err := structpb.NewStruct(map[string]any{"max_rounds": "abc"})
				require.NoError(t, err)
				_, err = s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: p, Options: bad})
				require.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", p, err)
				requireClean(t, "CreateDebate with a wrongly typed option of "+p, err)
			}

			_, err = s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "synthetic.v1", Options: opts, IdempotencyKey: "k1"})
			require.NoError(t, err)
			opts2, err := structpb.NewStruct(map[string]any{"max_rounds": 2})
			require.NoError(t, err)
			_, err = s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "synthetic.v1", Options: opts2, IdempotencyKey: "k1"})
			require.Equal(t, codes.AlreadyExists, status.Code(err), "%v", err)
			requireClean(t, "CreateDebate reusing an idempotency key", err)

			d := s.create(t, s.a, "deal-a", map[string]any{"max_rounds": 1})
			s.watch(t, s.a, d.GetDebateId(), 0, nil)
			_, err = s.debate.CancelDebate(s.a, &debatedv1.CancelDebateRequest{DebateId: d.GetDebateId(), Reason: "late"})
			require.Equal(t, codes.FailedPrecondition, status.Code(err), "%v", err)
			requireClean(t, "CancelDebate of a finished debate", err)
			_, err = s.debate.ResolveHumanGate(s.a, &debatedv1.ResolveHumanGateRequest{DebateId: d.GetDebateId(), GateId: "zz-gate", Approve: true, Reason: "r"})
			require.Error(t, err)
			requireClean(t, "ResolveHumanGate of an unknown gate", err)

			_, err = reg.CureDefect(s.a, &debatedv1.CureDefectRequest{DealId: "deal-a", DefectId: "zz-defect", Actor: "me", Reason: "r"})
			require.Equal(t, codes.NotFound, status.Code(err), "%v", err)
			requireClean(t, "CureDefect of an unknown defect", err)
		})
	}
}

func importRequestFor(t *testing.T, dealID string) *debatedv1.ImportDealRequest {
	t.Helper()
	req, err := apiconv.BundleToProto(storetest.SampleBundle(dealID))
	require.NoError(t, err)
	return req
}

// readExport reads ExportDebate's stream to its end and reassembles the
// bundle.
func readExport(ctx context.Context, c debatedv1.DebateServiceClient, id string) ([]byte, error) {
	st, err := c.ExportDebate(ctx, &debatedv1.ExportDebateRequest{DebateId: id})
	if err != nil {
		return nil, err
	}
	var data []byte
	total := int64(-1)
	for {
		msg, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if total < 0 {
			total = msg.GetTotalBytes()
		}
		if len(msg.GetChunk()) > 1<<20 {
			return nil, fmt.Errorf("a chunk of %d bytes", len(msg.GetChunk()))
		}
		data = append(data, msg.GetChunk()...)
	}
	if int64(len(data)) != total {
		return nil, fmt.Errorf("export: %d of %d bytes", len(data), total)
	}
	return data, nil
}

func exportBundle(t *testing.T, ctx context.Context, c debatedv1.DebateServiceClient, id string) []byte {
	t.Helper()
	data, err := readExport(ctx, c, id)
	require.NoError(t, err)
	return data
}

// TestTenantModelPrivateURLRefused: a tenant's model base URL on a
// loopback, private, link-local or metadata address, or a name resolving to
// one, is refused at set-up; and a URL stored while the operator allowed
// them is refused at use, on the address dialled, once they are not.
func TestTenantModelPrivateURLRefused(t *testing.T) {
	t.Parallel()
	srv := modelServer(t, storetest.SampleBundle("deal-a"))
	dir := t.TempDir()
	env := map[string]string{"DEBATED_ADMIN_TOKEN": "e2e-admin", "DEBATED_LOG_LEVEL": "warn"}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", dir}
	conn, stop, _ := start(t, args, env)
	s := &stack{conn: conn, stop: stop, debate: debatedv1.NewDebateServiceClient(conn)}
	s.a = s.login(t, "a")
	admin := debatedv1.NewAdminServiceClient(conn)
	tenants, err := admin.ListTenants(metadataAdmin(), &debatedv1.ListTenantsRequest{})
	require.NoError(t, err)
	tenantA := tenants.GetTenants()[0].GetTenantId()

	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data", "http://127.0.0.1:8000/v1", "http://[::1]:8000/v1",
		"http://10.1.2.3/v1", "https://192.168.0.1/v1", "http://172.16.0.1/v1", "http://[fd00:ec2::254]/",
		"http://[::ffff:127.0.0.1]/v1", "http://0.0.0.0:8000/v1", "http://localhost:11434/v1", srv.URL,
	} {
		_, err := admin.SetTenantModel(metadataAdmin(), &debatedv1.SetTenantModelRequest{TenantId: tenantA, BaseUrl: u, Model: "m"})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "%s: %v", u, err)
		var fields []string
		for _, d := range status.Convert(err).Details() {
			if br, ok := d.(*errdetails.BadRequest); ok {
				for _, v := range br.GetFieldViolations() {
					fields = append(fields, v.GetField())
				}
			}
		}
		require.Equal(t, []string{"base_url"}, fields, u)
		require.Contains(t, status.Convert(err).Message(), "DEBATED_LLM_ALLOW_PRIVATE", u)
	}
	require.NoError(t, stop())

	// The operator allows private endpoints: the test double's URL is taken.
	env["DEBATED_LLM_ALLOW_PRIVATE"] = "true"
	conn, stop, _ = start(t, args, env)
	admin = debatedv1.NewAdminServiceClient(conn)
	_, err = admin.SetTenantModel(metadataAdmin(), &debatedv1.SetTenantModelRequest{TenantId: tenantA, BaseUrl: srv.URL, Model: "m"})
	require.NoError(t, err)
	require.NoError(t, stop())

	// No longer allowed: the stored URL is refused when dialled.
	delete(env, "DEBATED_LLM_ALLOW_PRIVATE")
	conn, stop, _ = start(t, args, env)
	s = &stack{conn: conn, stop: stop, debate: debatedv1.NewDebateServiceClient(conn), a: s.a}
	resp, err := s.debate.CreateDebate(s.a, &debatedv1.CreateDebateRequest{DealId: "deal-a", Protocol: "idis.vc.v1",
		Options: mustStruct(t, map[string]any{"max_rounds": 1})})
	require.NoError(t, err)
	msgs := s.watch(t, s.a, resp.GetDebate().GetDebateId(), 0, nil)
	require.NotEqual(t, debatedv1.DebateStatus_DEBATE_STATUS_COMPLETED, msgs[len(msgs)-1].GetStatus())
	require.Zero(t, srv.Calls(), "no request reached the loopback endpoint")
}

// Package metrics exposes the service's Prometheus metrics: gRPC server
// metrics, and the debates' steps, node latency, retries, tool calls, gate
// rejections, ends by status and stop reason, rounds, watchers and queue
// depth. Everything is derived from what the service commits, so a metric
// never says more than the ledger.
package metrics

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/debated/debated/internal/debate"
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the service's collectors on its own registry.
type Metrics struct {
	reg            *prometheus.Registry
	GRPC           *grpcprom.ServerMetrics
	steps          *prometheus.CounterVec
	stepLatency    *prometheus.HistogramVec
	retries        *prometheus.CounterVec
	toolCalls      *prometheus.CounterVec
	gateRejections *prometheus.CounterVec
	finished       *prometheus.CounterVec
	rounds         *prometheus.HistogramVec
	events         *prometheus.CounterVec
	tokens         *prometheus.CounterVec
}

// New returns the metrics, registered with the Go and process collectors.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		GRPC: grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
			grpcprom.WithHistogramBuckets([]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}))),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "debated_node_steps_total", Help: "Committed node steps, by protocol and node.",
		}, []string{"protocol", "node"}),
		stepLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "debated_node_step_seconds", Help: "Time of a node step, from its start to its commit, by protocol and node.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"protocol", "node"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "debated_node_retries_total", Help: "Node attempts that failed and were retried, by protocol and node.",
		}, []string{"protocol", "node"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "debated_tool_calls_total", Help: "Agent tool calls, allowed or refused, by tool and result status.",
		}, []string{"tool", "result"}),
		gateRejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "debated_gate_rejections_total", Help: "Agent outputs rejected by the gates, by violated rule.",
		}, []string{"rule"}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "debated_debates_finished_total", Help: "Debates that reached a terminal status, by protocol, status and stop reason.",
		}, []string{"protocol", "status", "stop_reason"}),
		rounds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "debated_debate_rounds", Help: "Rounds a debate ran, observed when it ends.",
			Buckets: []float64{1, 2, 3, 4, 5, 6, 8, 10, 20, 50},
		}, []string{"protocol"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "debated_model_tokens_total", Help: "Model tokens used by the model-backed roles, by tenant, role and kind (prompt, completion).",
		}, []string{"tenant", "role", "kind"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "debated_ledger_events_total", Help: "Ledger events committed, by type.",
		}, []string{"type"}),
	}
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.GRPC, m.steps, m.stepLatency, m.retries, m.toolCalls, m.gateRejections, m.finished, m.rounds, m.events, m.tokens)
	return m
}

// Gauge registers a gauge read at scrape time (watchers, queue depth).
func (m *Metrics) Gauge(name, help string, read func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, read))
}

// Counter registers a counter read at scrape time (a store's totals).
func (m *Metrics) Counter(name, help string, read func() float64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, read))
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// ObserveStep records a committed step of debate d that took elapsed.
func (m *Metrics) ObserveStep(d debate.Debate, c *debate.StepCommit, elapsed time.Duration) {
	node := ""
	for _, e := range c.Events {
		m.events.WithLabelValues(e.Type).Inc()
		switch e.Type {
		case "node.started":
			node = e.Node
		case "node.retry":
			m.retries.WithLabelValues(d.Protocol, e.Node).Inc()
		case "agent.tool_call":
			var p struct {
				Tool   string `json:"tool_name"`
				Result string `json:"result_status"`
			}
			if json.Unmarshal(e.Payload, &p) == nil {
				m.toolCalls.WithLabelValues(p.Tool, p.Result).Inc()
			}
		case "muhasabah.rejected":
			var p struct {
				Violations []debate.Violation `json:"violations"`
			}
			if json.Unmarshal(e.Payload, &p) == nil {
				seen := map[string]bool{}
				for _, v := range p.Violations {
					if !seen[v.Rule] {
						seen[v.Rule] = true
						m.gateRejections.WithLabelValues(v.Rule).Inc()
					}
				}
			}
		}
	}
	if node != "" {
		m.steps.WithLabelValues(d.Protocol, node).Inc()
		m.stepLatency.WithLabelValues(d.Protocol, node).Observe(elapsed.Seconds())
	}
	if c.Status.Terminal() {
		m.finished.WithLabelValues(d.Protocol, string(c.Status), c.StopReason).Inc()
		m.rounds.WithLabelValues(d.Protocol).Observe(float64(c.Round))
	}
}

// ObserveTokens records the tokens of one model call of a tenant.
func (m *Metrics) ObserveTokens(tenant, role string, prompt, completion int) {
	m.tokens.WithLabelValues(tenant, role, "prompt").Add(float64(prompt))
	m.tokens.WithLabelValues(tenant, role, "completion").Add(float64(completion))
}

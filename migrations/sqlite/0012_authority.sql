-- 0012_authority: no row with the empty tenant id (see PostgreSQL). SQLite
-- cannot add a CHECK to an existing table, so BEFORE INSERT triggers refuse
-- the row instead. The embedded store has one process and no database
-- roles: the row-level security and grants of the PostgreSQL migration have
-- no analogue here.
CREATE TRIGGER tenants_id_not_empty BEFORE INSERT ON tenants
WHEN NEW.id = ''
BEGIN
    SELECT RAISE(ABORT, 'tenants: the tenant id may not be empty');
END;

CREATE TRIGGER api_keys_tenant_id_not_empty BEFORE INSERT ON api_keys
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'api_keys: the tenant id may not be empty');
END;

CREATE TRIGGER deals_tenant_id_not_empty BEFORE INSERT ON deals
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'deals: the tenant id may not be empty');
END;

CREATE TRIGGER claims_tenant_id_not_empty BEFORE INSERT ON claims
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'claims: the tenant id may not be empty');
END;

CREATE TRIGGER evidence_items_tenant_id_not_empty BEFORE INSERT ON evidence_items
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'evidence_items: the tenant id may not be empty');
END;

CREATE TRIGGER spans_tenant_id_not_empty BEFORE INSERT ON spans
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'spans: the tenant id may not be empty');
END;

CREATE TRIGGER sanads_tenant_id_not_empty BEFORE INSERT ON sanads
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'sanads: the tenant id may not be empty');
END;

CREATE TRIGGER documents_tenant_id_not_empty BEFORE INSERT ON documents
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'documents: the tenant id may not be empty');
END;

CREATE TRIGGER calcs_tenant_id_not_empty BEFORE INSERT ON calcs
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'calcs: the tenant id may not be empty');
END;

CREATE TRIGGER deal_gradings_tenant_id_not_empty BEFORE INSERT ON deal_gradings
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'deal_gradings: the tenant id may not be empty');
END;

CREATE TRIGGER defects_tenant_id_not_empty BEFORE INSERT ON defects
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'defects: the tenant id may not be empty');
END;

CREATE TRIGGER deal_events_tenant_id_not_empty BEFORE INSERT ON deal_events
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'deal_events: the tenant id may not be empty');
END;

CREATE TRIGGER debates_tenant_id_not_empty BEFORE INSERT ON debates
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'debates: the tenant id may not be empty');
END;

CREATE TRIGGER debate_events_tenant_id_not_empty BEFORE INSERT ON debate_events
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'debate_events: the tenant id may not be empty');
END;

CREATE TRIGGER debate_checkpoints_tenant_id_not_empty BEFORE INSERT ON debate_checkpoints
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'debate_checkpoints: the tenant id may not be empty');
END;

CREATE TRIGGER human_gates_tenant_id_not_empty BEFORE INSERT ON human_gates
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'human_gates: the tenant id may not be empty');
END;

CREATE TRIGGER enrichment_records_tenant_id_not_empty BEFORE INSERT ON enrichment_records
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'enrichment_records: the tenant id may not be empty');
END;

CREATE TRIGGER model_responses_tenant_id_not_empty BEFORE INSERT ON model_responses
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'model_responses: the tenant id may not be empty');
END;

CREATE TRIGGER tenant_models_tenant_id_not_empty BEFORE INSERT ON tenant_models
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'tenant_models: the tenant id may not be empty');
END;

CREATE TRIGGER tlog_queue_tenant_id_not_empty BEFORE INSERT ON tlog_queue
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'tlog_queue: the tenant id may not be empty');
END;

CREATE TRIGGER tlog_leaves_tenant_id_not_empty BEFORE INSERT ON tlog_leaves
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'tlog_leaves: the tenant id may not be empty');
END;

CREATE TRIGGER tlog_nodes_tenant_id_not_empty BEFORE INSERT ON tlog_nodes
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'tlog_nodes: the tenant id may not be empty');
END;

CREATE TRIGGER tlog_heads_tenant_id_not_empty BEFORE INSERT ON tlog_heads
WHEN NEW.tenant_id = ''
BEGIN
    SELECT RAISE(ABORT, 'tlog_heads: the tenant id may not be empty');
END;

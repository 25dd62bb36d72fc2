-- index idx_failures_conversation_id
CREATE INDEX idx_failures_conversation_id ON failures (conversation_id);

-- index idx_failures_run_id
CREATE INDEX idx_failures_run_id ON failures (run_id);

-- index idx_memories_memory_id
CREATE INDEX idx_memories_memory_id ON memories (memory_id);

-- index idx_results_conversation_hash
CREATE INDEX idx_results_conversation_hash ON results (conversation_hash);

-- index idx_results_conversation_id
CREATE INDEX idx_results_conversation_id ON results (conversation_id);

-- index idx_results_run
CREATE INDEX idx_results_run ON results (run);

-- index idx_results_tenant_subject
CREATE INDEX idx_results_tenant_subject ON results (tenant, subject);

-- table failures
CREATE TABLE failures (
    failure_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    conversation_id TEXT,
    conversation_hash TEXT,
    source TEXT,
    line INTEGER,
    field TEXT,
    stage TEXT NOT NULL,
    error_code TEXT NOT NULL,
    error TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    failure_json TEXT NOT NULL
, tenant TEXT, subject TEXT);

-- table memories
CREATE TABLE memories (
    id INTEGER PRIMARY KEY,
    result INTEGER NOT NULL REFERENCES results (id),
    seq INTEGER NOT NULL,
    memory_id TEXT NOT NULL,
    conversation_id TEXT,
    candidate_id TEXT NOT NULL,
    candidate_hash BLOB NOT NULL,
    content TEXT NOT NULL,
    memory_type INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    origin_kind INTEGER NOT NULL,
    verification_state INTEGER NOT NULL,
    lifecycle_state INTEGER NOT NULL,
    temporal_kind INTEGER NOT NULL,
    temporal_expression TEXT,
    valid_from INTEGER,
    valid_to INTEGER,
    observed_at INTEGER,
    recorded_at TEXT,
    parent_memory_ids TEXT NOT NULL,
    requested_uses INTEGER NOT NULL,
    evidence_ids INTEGER NOT NULL,
    evidence_ref TEXT NOT NULL,
    evidence_hash BLOB NOT NULL,
    quote TEXT NOT NULL,
    span_corrected INTEGER NOT NULL CHECK (span_corrected IN (0, 1)),
    hedges INTEGER NOT NULL,
    model INTEGER NOT NULL,
    prompt_hash INTEGER NOT NULL,
    memory_schema_version INTEGER NOT NULL,
    candidate_json TEXT NOT NULL,
    decided INTEGER,
    input_hash BLOB,
    persist INTEGER CHECK (persist IN (0, 1)),
    d_lifecycle_state INTEGER,
    d_allowed_uses INTEGER,
    d_forbidden_uses INTEGER,
    d_denied_requested_uses INTEGER,
    eligible_for_admission INTEGER CHECK (eligible_for_admission IN (0, 1)),
    d_flags INTEGER,
    rules INTEGER,
    rule_details TEXT,
    inherited_from TEXT,
    d_evidence_as_of INTEGER,
    d_policy_id INTEGER,
    d_policy_version INTEGER,
    d_as_of INTEGER,
    decision_json TEXT,
    UNIQUE (result, memory_id),
    CHECK ((decided IS NULL) = (input_hash IS NULL))
);

-- table migrations
CREATE TABLE migrations (
    name TEXT PRIMARY KEY,
    applied_at TEXT NOT NULL
);

-- table policy_rules
CREATE TABLE policy_rules (
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    rule_id TEXT NOT NULL,
    rule_hash TEXT NOT NULL,
    reason TEXT NOT NULL,
    PRIMARY KEY (policy_id, policy_version, rule_id, rule_hash)
);

-- table rejection_rows
CREATE TABLE rejection_rows (
    id INTEGER PRIMARY KEY,
    result INTEGER NOT NULL REFERENCES results (id),
    seq INTEGER NOT NULL,
    candidate_index INTEGER NOT NULL,
    candidate_id TEXT,
    code INTEGER NOT NULL,
    field TEXT,
    message TEXT NOT NULL,
    raw_json TEXT NOT NULL,
    UNIQUE (result, seq)
);

-- table results
CREATE TABLE results (
    id INTEGER PRIMARY KEY,
    result_key BLOB NOT NULL UNIQUE,
    run INTEGER NOT NULL,
    conversation_id TEXT NOT NULL,
    conversation_hash BLOB NOT NULL,
    source INTEGER,
    line INTEGER,
    field TEXT,
    model INTEGER NOT NULL,
    prompt_hash INTEGER NOT NULL,
    schema_version INTEGER NOT NULL,
    policy_id INTEGER NOT NULL,
    policy_version INTEGER NOT NULL,
    candidate_count INTEGER NOT NULL,
    rejection_count INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    cached INTEGER NOT NULL CHECK (cached IN (0, 1)),
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_ms REAL NOT NULL,
    recorded_at TEXT NOT NULL,
    result_json TEXT NOT NULL,
    tenant INTEGER,
    subject INTEGER
);

-- table runs
CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'interrupted')),
    model TEXT NOT NULL,
    prompt_id TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    schema_version TEXT NOT NULL,
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    extractor_version TEXT NOT NULL,
    settings_json TEXT NOT NULL,
    summary_json TEXT
, pid INTEGER, host TEXT);

-- table texts
CREATE TABLE texts (id INTEGER PRIMARY KEY, value TEXT NOT NULL UNIQUE);

-- table transcripts
CREATE TABLE transcripts (
    conversation_hash TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    conversation_json TEXT NOT NULL
, redactions TEXT, stored_hash TEXT);

-- view candidates
CREATE VIEW candidates AS
SELECT
    CASE WHEN typeof(r.result_key) = 'blob' THEN 'sha256:' || lower(hex(r.result_key)) ELSE r.result_key END AS result_key, m.memory_id, (SELECT value FROM texts WHERE id = r.run) AS run_id,
    COALESCE(m.conversation_id, r.conversation_id) AS conversation_id,
    CASE WHEN typeof(r.conversation_hash) = 'blob' THEN 'sha256:' || lower(hex(r.conversation_hash)) ELSE r.conversation_hash END AS conversation_hash, m.candidate_id,
    CASE WHEN typeof(m.candidate_hash) = 'blob' THEN 'sha256:' || lower(hex(m.candidate_hash)) ELSE m.candidate_hash END AS candidate_hash, m.content, (SELECT value FROM texts WHERE id = m.memory_type) AS memory_type,
    (SELECT value FROM texts WHERE id = m.kind) AS kind, (SELECT value FROM texts WHERE id = m.origin_kind) AS origin_kind,
    (SELECT value FROM texts WHERE id = m.verification_state) AS verification_state,
    (SELECT value FROM texts WHERE id = m.lifecycle_state) AS lifecycle_state, (SELECT value FROM texts WHERE id = m.temporal_kind) AS temporal_kind,
    m.temporal_expression, (SELECT value FROM texts WHERE id = m.valid_from) AS valid_from, (SELECT value FROM texts WHERE id = m.valid_to) AS valid_to,
    (SELECT value FROM texts WHERE id = m.observed_at) AS observed_at, COALESCE(m.recorded_at, r.recorded_at) AS recorded_at,
    m.parent_memory_ids, (SELECT value FROM texts WHERE id = m.requested_uses) AS requested_uses,
    (SELECT value FROM texts WHERE id = m.evidence_ids) AS evidence_ids,
    CASE WHEN substr(m.evidence_ref, 1, 1) = '#' THEN CASE WHEN typeof(r.conversation_hash) = 'blob' THEN 'sha256:' || lower(hex(r.conversation_hash)) ELSE r.conversation_hash END || m.evidence_ref
         ELSE m.evidence_ref END AS evidence_ref,
    CASE WHEN typeof(m.evidence_hash) = 'blob' THEN 'sha256:' || lower(hex(m.evidence_hash)) ELSE m.evidence_hash END AS evidence_hash, m.quote, m.span_corrected,
    (SELECT value FROM texts WHERE id = m.hedges) AS hedges, (SELECT value FROM texts WHERE id = m.model) AS model, (SELECT value FROM texts WHERE id = m.prompt_hash) AS prompt_hash,
    (SELECT value FROM texts WHERE id = m.memory_schema_version) AS memory_schema_version, m.candidate_json,
    (SELECT value FROM texts WHERE id = r.tenant) AS tenant, (SELECT value FROM texts WHERE id = r.subject) AS subject
FROM memories AS m JOIN results AS r ON r.id = m.result
ORDER BY m.id;

-- view conversations
CREATE VIEW conversations AS
SELECT
    CASE WHEN typeof(r.result_key) = 'blob' THEN 'sha256:' || lower(hex(r.result_key)) ELSE r.result_key END AS result_key, (SELECT value FROM texts WHERE id = r.run) AS run_id, r.conversation_id,
    CASE WHEN typeof(r.conversation_hash) = 'blob' THEN 'sha256:' || lower(hex(r.conversation_hash)) ELSE r.conversation_hash END AS conversation_hash, (SELECT value FROM texts WHERE id = r.source) AS source, r.line, r.field,
    (SELECT value FROM texts WHERE id = r.model) AS model, (SELECT value FROM texts WHERE id = r.prompt_hash) AS prompt_hash,
    (SELECT value FROM texts WHERE id = r.schema_version) AS schema_version, (SELECT value FROM texts WHERE id = r.policy_id) AS policy_id,
    (SELECT value FROM texts WHERE id = r.policy_version) AS policy_version, r.candidate_count, r.rejection_count, r.attempts,
    r.chunks, r.cached, r.prompt_tokens, r.completion_tokens, r.total_ms, r.recorded_at,
    r.result_json, (SELECT value FROM texts WHERE id = r.tenant) AS tenant, (SELECT value FROM texts WHERE id = r.subject) AS subject
FROM results AS r
ORDER BY r.id;

-- view decisions
CREATE VIEW decisions AS
SELECT
    CASE WHEN typeof(r.result_key) = 'blob' THEN 'sha256:' || lower(hex(r.result_key)) ELSE r.result_key END AS result_key, m.memory_id, (SELECT value FROM texts WHERE id = r.run) AS run_id,
    CASE WHEN typeof(m.input_hash) = 'blob' THEN 'sha256:' || lower(hex(m.input_hash)) ELSE m.input_hash END AS input_hash, m.persist, (SELECT value FROM texts WHERE id = m.d_lifecycle_state) AS lifecycle_state,
    (SELECT value FROM texts WHERE id = m.d_allowed_uses) AS allowed_uses, (SELECT value FROM texts WHERE id = m.d_forbidden_uses) AS forbidden_uses,
    (SELECT value FROM texts WHERE id = m.d_denied_requested_uses) AS denied_requested_uses, m.eligible_for_admission,
    (SELECT value FROM texts WHERE id = m.d_flags) AS flags, CASE WHEN m.rule_details IS NULL THEN (SELECT value FROM texts WHERE id = m.rules) ELSE (
        SELECT json_group_array(json_set(f.value, '$.detail',
                                         json_extract(m.rule_details, '$[' || f.key || ']')))
        FROM json_each((SELECT value FROM texts WHERE id = m.rules)) AS f) END AS rules_fired, m.inherited_from,
    (SELECT value FROM texts WHERE id = m.d_evidence_as_of) AS evidence_as_of, (SELECT value FROM texts WHERE id = m.d_policy_id) AS policy_id,
    (SELECT value FROM texts WHERE id = m.d_policy_version) AS policy_version, (SELECT value FROM texts WHERE id = m.d_as_of) AS as_of,
    COALESCE(m.decision_json, '{}') AS decision_json
FROM memories AS m JOIN results AS r ON r.id = m.result
WHERE m.decided IS NOT NULL
ORDER BY m.result, m.decided;

-- view memory_ledger
CREATE VIEW memory_ledger AS
SELECT
    m.memory_id, m.content, (SELECT value FROM texts WHERE id = m.memory_type) AS memory_type,
    (SELECT value FROM texts WHERE id = m.origin_kind) AS origin_kind, (SELECT value FROM texts WHERE id = m.verification_state) AS verification_state,
    (SELECT value FROM texts WHERE id = m.valid_from) AS valid_from, (SELECT value FROM texts WHERE id = m.valid_to) AS valid_to,
    (SELECT value FROM texts WHERE id = m.observed_at) AS observed_at, COALESCE(m.recorded_at, r.recorded_at) AS recorded_at,
    (SELECT value FROM texts WHERE id = COALESCE(m.d_lifecycle_state, m.lifecycle_state)) AS lifecycle_state,
    m.parent_memory_ids, (SELECT value FROM texts WHERE id = m.d_allowed_uses) AS allowed_uses,
    (SELECT value FROM texts WHERE id = m.d_forbidden_uses) AS forbidden_uses, m.persist,
    (SELECT value FROM texts WHERE id = m.d_policy_id) AS admission_policy_id,
    (SELECT value FROM texts WHERE id = m.d_policy_version) AS admission_policy_version,
    (SELECT value FROM texts WHERE id = m.memory_schema_version) AS memory_schema_version,
    (SELECT value FROM texts WHERE id = m.prompt_hash) AS normalizer_version,
    CASE WHEN substr(m.evidence_ref, 1, 1) = '#' THEN CASE WHEN typeof(r.conversation_hash) = 'blob' THEN 'sha256:' || lower(hex(r.conversation_hash)) ELSE r.conversation_hash END || m.evidence_ref
         ELSE m.evidence_ref END AS evidence_ref,
    CASE WHEN typeof(m.evidence_hash) = 'blob' THEN 'sha256:' || lower(hex(m.evidence_hash)) ELSE m.evidence_hash END AS evidence_hash, CASE WHEN typeof(m.input_hash) = 'blob' THEN 'sha256:' || lower(hex(m.input_hash)) ELSE m.input_hash END AS decision_input_hash,
    COALESCE(m.conversation_id, r.conversation_id) AS conversation_id, (SELECT value FROM texts WHERE id = r.run) AS run_id,
    CASE WHEN typeof(r.result_key) = 'blob' THEN 'sha256:' || lower(hex(r.result_key)) ELSE r.result_key END AS result_key, (SELECT value FROM texts WHERE id = r.tenant) AS tenant, (SELECT value FROM texts WHERE id = r.subject) AS subject
FROM memories AS m JOIN results AS r ON r.id = m.result;

-- view rejections
CREATE VIEW rejections AS
SELECT
    CASE WHEN typeof(r.result_key) = 'blob' THEN 'sha256:' || lower(hex(r.result_key)) ELSE r.result_key END AS result_key, j.seq, (SELECT value FROM texts WHERE id = r.run) AS run_id, r.conversation_id,
    j.candidate_index, j.candidate_id, (SELECT value FROM texts WHERE id = j.code) AS code, j.field, j.message, j.raw_json
FROM rejection_rows AS j JOIN results AS r ON r.id = j.result
ORDER BY j.id;

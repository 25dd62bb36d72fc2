-- index idx_candidates_conversation_id
CREATE INDEX idx_candidates_conversation_id ON candidates (conversation_id);

-- index idx_candidates_memory_id
CREATE INDEX idx_candidates_memory_id ON candidates (memory_id);

-- index idx_candidates_run_id
CREATE INDEX idx_candidates_run_id ON candidates (run_id);

-- index idx_candidates_tenant_subject
CREATE INDEX idx_candidates_tenant_subject ON candidates (tenant, subject);

-- index idx_conversations_conversation_hash
CREATE INDEX idx_conversations_conversation_hash ON conversations (conversation_hash);

-- index idx_conversations_conversation_id
CREATE INDEX idx_conversations_conversation_id ON conversations (conversation_id);

-- index idx_conversations_run_id
CREATE INDEX idx_conversations_run_id ON conversations (run_id);

-- index idx_conversations_tenant_subject
CREATE INDEX idx_conversations_tenant_subject ON conversations (tenant, subject);

-- index idx_decisions_input_hash
CREATE INDEX idx_decisions_input_hash ON decisions (input_hash);

-- index idx_decisions_run_id
CREATE INDEX idx_decisions_run_id ON decisions (run_id);

-- index idx_failures_conversation_id
CREATE INDEX idx_failures_conversation_id ON failures (conversation_id);

-- index idx_failures_run_id
CREATE INDEX idx_failures_run_id ON failures (run_id);

-- index idx_rejections_conversation_id
CREATE INDEX idx_rejections_conversation_id ON rejections (conversation_id);

-- index idx_rejections_run_id
CREATE INDEX idx_rejections_run_id ON rejections (run_id);

-- table candidates
CREATE TABLE candidates (
    result_key TEXT NOT NULL REFERENCES conversations (result_key),
    memory_id TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    conversation_id TEXT NOT NULL,
    conversation_hash TEXT NOT NULL,
    candidate_id TEXT NOT NULL,
    candidate_hash TEXT NOT NULL,
    content TEXT NOT NULL,
    memory_type TEXT NOT NULL,
    kind TEXT NOT NULL,
    origin_kind TEXT NOT NULL,
    verification_state TEXT NOT NULL,
    lifecycle_state TEXT NOT NULL,
    temporal_kind TEXT NOT NULL,
    temporal_expression TEXT,
    valid_from TEXT,
    valid_to TEXT,
    observed_at TEXT,
    recorded_at TEXT NOT NULL,
    parent_memory_ids TEXT NOT NULL,
    requested_uses TEXT NOT NULL,
    evidence_ids TEXT NOT NULL,
    evidence_ref TEXT NOT NULL,
    evidence_hash TEXT NOT NULL,
    quote TEXT NOT NULL,
    span_corrected INTEGER NOT NULL CHECK (span_corrected IN (0, 1)),
    hedges TEXT NOT NULL,
    model TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    memory_schema_version TEXT NOT NULL,
    candidate_json TEXT NOT NULL, tenant TEXT, subject TEXT,
    PRIMARY KEY (result_key, memory_id)
);

-- table conversations
CREATE TABLE conversations (
    result_key TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    conversation_id TEXT NOT NULL,
    conversation_hash TEXT NOT NULL,
    source TEXT,
    line INTEGER,
    field TEXT,
    model TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    schema_version TEXT NOT NULL,
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    candidate_count INTEGER NOT NULL,
    rejection_count INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    cached INTEGER NOT NULL CHECK (cached IN (0, 1)),
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    total_ms REAL NOT NULL,
    recorded_at TEXT NOT NULL,
    result_json TEXT NOT NULL
, tenant TEXT, subject TEXT);

-- table decisions
CREATE TABLE decisions (
    result_key TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    input_hash TEXT NOT NULL,
    persist INTEGER NOT NULL CHECK (persist IN (0, 1)),
    lifecycle_state TEXT NOT NULL,
    allowed_uses TEXT NOT NULL,
    forbidden_uses TEXT NOT NULL,
    denied_requested_uses TEXT NOT NULL,
    eligible_for_admission INTEGER NOT NULL CHECK (eligible_for_admission IN (0, 1)),
    flags TEXT NOT NULL,
    rules_fired TEXT NOT NULL,
    inherited_from TEXT NOT NULL,
    evidence_as_of TEXT,
    policy_id TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    as_of TEXT,
    decision_json TEXT NOT NULL,
    PRIMARY KEY (result_key, memory_id),
    FOREIGN KEY (result_key, memory_id) REFERENCES candidates (result_key, memory_id)
);

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

-- table rejections
CREATE TABLE rejections (
    result_key TEXT NOT NULL REFERENCES conversations (result_key),
    seq INTEGER NOT NULL,
    run_id TEXT NOT NULL REFERENCES runs (run_id),
    conversation_id TEXT NOT NULL,
    candidate_index INTEGER NOT NULL,
    candidate_id TEXT,
    code TEXT NOT NULL,
    field TEXT,
    message TEXT NOT NULL,
    raw_json TEXT NOT NULL,
    PRIMARY KEY (result_key, seq)
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

-- table transcripts
CREATE TABLE transcripts (
    conversation_hash TEXT PRIMARY KEY,
    conversation_id TEXT NOT NULL,
    conversation_json TEXT NOT NULL
, redactions TEXT, stored_hash TEXT);

-- view memory_ledger
CREATE VIEW memory_ledger AS
SELECT
    c.memory_id,
    c.content,
    c.memory_type,
    c.origin_kind,
    c.verification_state,
    c.valid_from,
    c.valid_to,
    c.observed_at,
    c.recorded_at,
    COALESCE(d.lifecycle_state, c.lifecycle_state) AS lifecycle_state,
    c.parent_memory_ids,
    d.allowed_uses,
    d.forbidden_uses,
    d.persist,
    d.policy_id AS admission_policy_id,
    d.policy_version AS admission_policy_version,
    c.memory_schema_version,
    c.prompt_hash AS normalizer_version,
    c.evidence_ref,
    c.evidence_hash,
    d.input_hash AS decision_input_hash,
    c.conversation_id,
    c.run_id,
    c.result_key,
    c.tenant,
    c.subject
FROM candidates AS c
LEFT JOIN decisions AS d ON d.result_key = c.result_key AND d.memory_id = c.memory_id;
